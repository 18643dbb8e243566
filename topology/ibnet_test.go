package topology

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func readFixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata/ibnet", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestIBNetFabric(t *testing.T) {
	topo, err := ParseIBNetDiscover("fabric-2tier.txt", []byte(readFixture(t, "fabric-2tier.txt")))
	if err != nil {
		t.Fatal(err)
	}
	if topo.LinkLayer != InfiniBand || len(topo.Switches) != 8 || len(topo.HCAs) != 8 || len(topo.Cables) != 16 ||
		topo.Leaves() != 4 || topo.MaxTier() != Spine {
		t.Fatalf("%s: %d switches, %d HCAs, %d cables, %d leaves, %d tiers; want ib, 8, 8, 16, 4, 2",
			topo.LinkLayer, len(topo.Switches), len(topo.HCAs), len(topo.Cables), topo.Leaves(), topo.MaxTier())
	}
	s, ok := topo.Switch("spine-r1-00")
	if want := (Switch{Name: "spine-r1-00", Tier: Spine, Plane: 1, GUID: "0x0c42a10300cc0100", LID: 7}); !ok || !reflect.DeepEqual(topo.Switches[s], want) {
		t.Errorf("spine-r1-00: %+v, want %+v", topo.Switches[s], want)
	}
	h, ok := topo.HCA("node-03", 1)
	if want := (HCA{Node: "node-03", Device: "mlx5_1", Rail: 1, GUID: "0x0c42a10300bb0301", LID: 14}); !ok || topo.HCAs[h] != want {
		t.Fatalf("node-03 rail 1: %+v, want %+v", topo.HCAs[h], want)
	}
	leaf := topo.Switches[topo.LeafOf(h)]
	if leaf.Name != "leaf-r1-01" || leaf.Tier != Leaf || leaf.Plane != 1 {
		t.Errorf("node-03 rail 1 is on %+v, want leaf-r1-01, plane 1", leaf)
	}
	c := topo.HCACable(h)
	if got := topo.CableName(c); got != "node-03/mlx5_1 <-> leaf-r1-01:1" || topo.Cables[c].Speed != "4xHDR" {
		t.Errorf("cable %s, speed %q", got, topo.Cables[c].Speed)
	}
	// Across leaves of a plane: host, leaf, spine, leaf, host.
	src, _ := topo.HCA("node-01", 0)
	dst, _ := topo.HCA("node-04", 0)
	path, ok := topo.Route(nil, src, dst, 0)
	if !ok || len(path) != 4 {
		t.Fatalf("node-01 -> node-04 rail 0: %v %v", ok, path)
	}
	checkPath(t, topo, src, dst, path)
}

// TestIBNetBadFixtures reads every testdata/ibnet/*.bad.txt; the first line
// of each is "# want: TEXT", which the error must contain after the file's
// name.
func TestIBNetBadFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/ibnet/*.bad.txt")
	if len(files) < 8 {
		t.Fatalf("%d broken fixtures, want 8", len(files))
	}
	for _, f := range files {
		text := readFixture(t, filepath.Base(f))
		first, _, _ := strings.Cut(text, "\n")
		want, ok := strings.CutPrefix(first, "# want: ")
		if !ok {
			t.Fatalf("%s: first line is not # want: TEXT", f)
		}
		topo, err := ParseIBNetDiscover(filepath.Base(f), []byte(text))
		var fe *FileError
		if err == nil || topo != nil || !errors.As(err, &fe) {
			t.Errorf("%s: %v, %v; want a *FileError", f, topo, err)
			continue
		}
		if want = filepath.Base(f) + want; !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n error %v\n want it to say %s", f, err, want)
		}
	}
}

func TestIBNetVariants(t *testing.T) {
	small := readFixture(t, "small.txt")
	const leafGUID, spineGUID = "0c42a10300aa0000", "0c42a10300cc0000"
	edit := func(pairs ...string) string { return strings.NewReplacer(pairs...).Replace(small) }
	for _, tc := range []struct {
		name, text string
		leaf       string // the leaf's name, when the text must load
		want       string // else the error must say this
	}{
		{name: "as is", text: small, leaf: "leaf-0"},
		{name: "CRLF", text: strings.ReplaceAll(small, "\n", "\r\n"), leaf: "leaf-0"},
		// -g adds [ext N] to switch ports, -f the raw speed, width and VL cap.
		{name: "-g -f", leaf: "leaf-0", text: edit(
			"[33]\t", "[33][ext 17]\t",
			"[33]\t\t# \"leaf-0\" lid 1 4xHDR", "[33][ext 17]\t\t# \"leaf-0\" lid 1 4xHDR s=4 w=2 v=3")},
		{name: "managed switch", leaf: "leaf-a", text: edit(`"leaf-0" enhanced`, `"MF0;leaf-a:MQM8700/U1" enhanced`)},
		// Unmanaged switches share a description: the GUID keeps names apart.
		{name: "shared description", leaf: "S-" + leafGUID, text: edit(`# "leaf-0" enhanced`, `# "Quantum Mellanox Technologies" enhanced`,
			`# "spine-0" enhanced`, `# "Quantum Mellanox Technologies" enhanced`)},
		{name: "empty", text: "", want: "x.txt: no Switch or Ca blocks"},
		{name: "plan", text: "cables:\n  - {a: n/mlx5_0, b: l:1}\n", want: `x.txt:1: "cables:" is not a line of ibnetdiscover's`},
		{name: "default NodeDescription", text: edit(`Ca	1 "H-0c42a10300bb0100"		# "node-01 mlx5_0"`, `Ca	1 "H-0c42a10300bb0100"		# "MT4123 ConnectX6   Mellanox Technologies"`),
			want: `x.txt:26: NodeDescription: "MT4123 ConnectX6   Mellanox Technologies" is not "HOST DEVICE"; rdma-ndd sets it so`},
		{name: "no rail", text: edit(`# "node-01 mlx5_0"`+"\n", `# "node-01 ib"`+"\n"),
			want: `x.txt:26: NodeDescription: device "ib" has no trailing number`},
		{name: "one rail twice", text: edit(`# "node-02 mlx5_0"`+"\n", `# "node-01 mlx5_0"`+"\n"),
			want: `x.txt:33: NodeDescription: node-01 rail 0 is also "node-01 mlx5_0" on line 26`},
		{name: "router", text: edit("caguid=0xc42a10300bb0200\nCa\t", "rtguid=0xc42a10300bb0200\nRt\t"), want: "x.txt:33: Rt line: a router"},
		{name: "node twice", text: edit("0xc42a10300bb0200", "0xc42a10300bb0100", `"H-0c42a10300bb0200"`, `"H-0c42a10300bb0100"`),
			want: "x.txt:33: Ca line: node H-0c42a10300bb0100 is listed twice (also on line 26)"},
		{name: "id mismatch", text: edit("switchguid=0xc42a10300cc0000", "switchguid=0xc42a10300cc0009"),
			want: "x.txt:19: Switch line: GUID 0c42a10300cc0000, but switchguid above says 0c42a10300cc0009"},
		{name: "port beyond the node", text: edit("Switch\t40 \"S-"+spineGUID, "Switch\t0 \"S-"+spineGUID),
			want: "x.txt:20: spine-0 port 1: no such port: line 19 says the node has ports 1 to 0"},
		{name: "no comment", text: edit("[33]\t\"S-0c42a10300cc0000\"[1]\t\t# \"spine-0\" lid 2 4xHDR", "[33]\t\"S-0c42a10300cc0000\"[1]"),
			want: `x.txt:13: leaf-0 port 33: comment "" is not "DESCRIPTION" lid N WIDTHSPEED`},
		{name: "CA cabled twice", text: edit(
			"[1](c42a10300bb0100) \t\"S-0c42a10300aa0000\"[1]\t\t# lid 3 lmc 0 \"leaf-0\" lid 1 4xHDR\n",
			"[1](c42a10300bb0100) \t\"S-0c42a10300aa0000\"[1]\t\t# lid 3 lmc 0 \"leaf-0\" lid 1 4xHDR\n[2](c42a10300bb0101) \t\"S-0c42a10300aa0000\"[5]\t\t# lid 5 lmc 0 \"leaf-0\" lid 1 4xHDR\n",
			"Ca\t1 \"H-0c42a10300bb0100\"", "Ca\t2 \"H-0c42a10300bb0100\""),
			want: "x.txt:28: node-01 mlx5_0 port 2: a second cabled port of one CA (port 1 is on line 27)"},
		// Back to back: New refuses it, and the error lands on the line.
		{name: "two CAs", text: "vendid=0x2c9\ndevid=0x101b\ncaguid=0x1\nCa\t1 \"H-0000000000000001\"\t\t# \"a mlx5_0\"\n" +
			"[1](1) \t\"H-0000000000000002\"[1] (2) \t\t# lid 1 lmc 0 \"b mlx5_0\" lid 2 4xHDR\n\n" +
			"vendid=0x2c9\ndevid=0x101b\ncaguid=0x2\nCa\t1 \"H-0000000000000002\"\t\t# \"b mlx5_0\"\n" +
			"[1](2) \t\"H-0000000000000001\"[1] (1) \t\t# lid 2 lmc 0 \"a mlx5_0\" lid 1 4xHDR\n",
			want: "x.txt:11: b mlx5_0 port 1: joins two HCAs"},
		{name: "port line first", text: "[1]\t\"S-0c42a10300aa0000\"[33]\t\t# \"leaf-0\" lid 1 4xHDR\n", want: "x.txt:1: a port line outside a node's block"},
	} {
		topo, err := ParseIBNetDiscover("x.txt", []byte(tc.text))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want == "":
			if _, ok := topo.Switch(tc.leaf); !ok || len(topo.Cables) != 3 {
				t.Errorf("%s: no switch %s in %+v, or not 3 cables", tc.name, tc.leaf, topo.Switches)
			}
		case err == nil || topo != nil:
			t.Errorf("%s: loaded; want an error saying %s", tc.name, tc.want)
		case !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s:\n error %v\n want it to say %s", tc.name, err, tc.want)
		}
	}
}
