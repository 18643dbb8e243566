package topology

import (
	"bytes"
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readTestdata(tb testing.TB, path string) string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

func loadIBNet(tb testing.TB, name string) *Topology {
	tb.Helper()
	topo, err := ParseIBNetDiscover(name, []byte(readTestdata(tb, "ibnet/"+name)))
	if err != nil {
		tb.Fatal(err)
	}
	return topo
}

func hcaOf(tb testing.TB, topo *Topology, node string, rail int) int {
	tb.Helper()
	h, ok := topo.HCA(node, rail)
	if !ok {
		tb.Fatalf("no HCA %s rail %d", node, rail)
	}
	return h
}

func adaptive(tb testing.TB, topo *Topology, list string) Adaptive {
	tb.Helper()
	a, err := ParseAdaptive("--adaptive", []byte(list), topo)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

func linkNames(topo *Topology, p []Link) []string {
	var out []string
	for _, l := range p {
		out = append(out, topo.LinkName(l))
	}
	return out
}

// checkIBPath fails unless a known path joins Src to Dst over the
// topology's cables and an unknown one has a reason and no links.
func checkIBPath(t *testing.T, topo *Topology, p IBPath) {
	t.Helper()
	if !p.Known() {
		if p.Links != nil {
			t.Fatalf("unknown path (%s) has links %v", p.Unknown, p.Links)
		}
		return
	}
	if p.Src < 0 || p.Dst < 0 || len(p.Links) < 2 {
		t.Fatalf("known path from %d to %d has %d links", p.Src, p.Dst, len(p.Links))
	}
	checkPath(t, topo, p.Src, p.Dst, p.Links)
}

const (
	twoTierPath = "node-01/mlx5_0 -> leaf-r0-00:1|leaf-r0-00:34 -> spine-r0-01:1|spine-r0-01:2 -> leaf-r0-01:34|leaf-r0-01:2 -> node-04/mlx5_0"
	lmcPath     = "node-01/mlx5_0 -> leaf-0:1|leaf-0:34 -> spine-1:1|spine-1:2 -> leaf-1:34|leaf-1:1 -> node-03/mlx5_0"
)

func TestIBTracertFixtures(t *testing.T) {
	fabric, lmc := loadIBNet(t, "fabric-2tier.txt"), loadIBNet(t, "lmc-2tier.txt")
	for _, tc := range []struct {
		file     string
		topo     *Topology
		src, dst string // node names, rail 0; "" = -1
		path     string // links joined by |, when known
		unknown  string // else the reason must say this
	}{
		{file: "two-tier.txt", topo: fabric, src: "node-01", dst: "node-04", path: twoTierPath},
		{file: "two-tier-n.txt", topo: fabric, src: "node-01", dst: "node-04", path: twoTierPath},
		{file: "same-leaf.txt", topo: fabric, src: "node-01", dst: "node-02", path: "node-01/mlx5_0 -> leaf-r0-00:1|leaf-r0-00:2 -> node-02/mlx5_0"},
		{file: "lmc-dlid11.txt", topo: lmc, src: "node-01", dst: "node-03", path: lmcPath},
		{file: "unknown-lid.txt", topo: fabric, src: "node-01",
			unknown: `unknown-lid.txt:3: hop 2, GUID 0x0c42a10300bb0500, LID 17 ("node-05 mlx5_0") is not in the topology`},
		{file: "truncated.txt", topo: fabric, src: "node-01",
			unknown: "truncated.txt:3: the output stops after leaf-r0-00 without a To line: cut short"},
		{file: "no-route.txt", topo: fabric,
			unknown: "no-route.txt:1: ibtracert failed: _do_madrpc failed; dport (Lid 99); can't reach to/from ports; can't find a route from src to dest; Failed to get route information"},
		{file: "bad-entry.txt", topo: fabric, src: "node-01",
			unknown: `bad-entry.txt:1: ibtracert failed after leaf-r0-00: Bad forwarding table entry found at: node "leaf-r0-00" lid entry 15 is 255 (top 13)`},
	} {
		p, err := ParseIBTracert(tc.file, []byte(readTestdata(t, "ibtrace/"+tc.file)), tc.topo, Adaptive{})
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		checkIBPath(t, tc.topo, p)
		wantSrc, wantDst := -1, -1
		if tc.src != "" {
			wantSrc = hcaOf(t, tc.topo, tc.src, 0)
		}
		if tc.dst != "" {
			wantDst = hcaOf(t, tc.topo, tc.dst, 0)
		}
		switch got := strings.Join(linkNames(tc.topo, p.Links), "|"); {
		case p.Src != wantSrc || p.Dst != wantDst:
			t.Errorf("%s: from %d to %d, want %d to %d", tc.file, p.Src, p.Dst, wantSrc, wantDst)
		case tc.path != "" && got != tc.path:
			t.Errorf("%s: path %s (unknown: %q)\n want %s", tc.file, got, p.Unknown, tc.path)
		case tc.path == "" && !strings.Contains(p.Unknown, tc.unknown):
			t.Errorf("%s: unknown %q\n want it to say %s", tc.file, p.Unknown, tc.unknown)
		}
	}
}

// TestIBTracertVariants edits the two-tier trace to reach every way a
// trace turns out unknown or wrong.
func TestIBTracertVariants(t *testing.T) {
	fabric := loadIBNet(t, "fabric-2tier.txt")
	trace := readTestdata(t, "ibtrace/two-tier.txt")
	lines := strings.Split(strings.TrimSuffix(trace, "\n"), "\n")
	from, leaf, spine, leaf2, ca, to := lines[0], lines[1], lines[2], lines[3], lines[4], lines[5]
	edit := func(pairs ...string) string { return strings.NewReplacer(pairs...).Replace(trace) }
	join := func(l ...string) string { return strings.Join(l, "\n") + "\n" }
	planTopo := func() *Topology {
		var b bytes.Buffer
		if err := fabric.WritePlan(&b); err != nil {
			t.Fatal(err)
		}
		topo, err := ParsePlan("plan.yaml", b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		return topo
	}()
	railPlan, err := ParsePlan("rails.yaml", []byte("link_layer: ib\ncables:\n"+
		"  - {a: node-01 rail 0, b: leaf-r0-00:1}\n  - {a: node-02 rail 0, b: leaf-r0-00:2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	const spineGUID = "{0x0c42a10300cc0001}"
	for _, tc := range []struct {
		name, text string
		topo       *Topology // fabric when nil
		ar         string
		path       string // links joined by |; "" = the two-tier path
		unknown    string // or the reason must say this
		err        string // or the error must
	}{
		{name: "as is", text: trace},
		{name: "CRLF, no newline at the end", text: strings.TrimSuffix(strings.ReplaceAll(trace, "\n", "\r\n"), "\r\n")},
		// -v first prints the way to the source, and chatter; -d debug lines.
		{name: "-v -d", text: join("[4711] get_port: portid Lid 9 portnum 0: lid 9 state 4 physstate 5",
			leaf, "ibdebug: [4711] find_route: from Lid 9", from, leaf, spine, leaf2, ca, to, "1 lid/guid pairs processed from pairs.txt")},
		{name: "a warning, still traced", text: "ibwarn: [4711] find_route: Force: look for lid 15\n" + trace},
		{name: "plan: matched by description", text: trace, topo: planTopo},
		{name: "switch port GUID is not its node GUID", text: edit(spineGUID, "{0x0c42a10300cc0f01}")},
		{name: "managed switch's description", text: edit(spineGUID+"[1] lid 6-6 \"spine-r0-01\"", "{0x0c42a10300cc0f01}[1] lid 6-6 \"MF0;spine-r0-01:MQM8700/U1\"")},
		{name: "plan: HCAs by rail", text: readTestdata(t, "ibtrace/same-leaf.txt"), topo: railPlan,
			path: "node-01 rail 0 -> leaf-r0-00:1|leaf-r0-00:2 -> node-02 rail 0"},
		{name: "plan: a host it lacks", text: readTestdata(t, "ibtrace/unknown-lid.txt"), topo: planTopo,
			unknown: `two-tier.txt:3: hop 2, GUID 0x0c42a10300bb0500, LID 17 ("node-05 mlx5_0") is not in the topology`},
		{name: "source port with no cable", text: edit("portnum 1 lid 9-9", "portnum 2 lid 9-9", "[1] -> switch port {0x0c42a10300aa0000}", "[2] -> switch port {0x0c42a10300aa0000}"),
			unknown: "two-tier.txt:2: hop 1, node-01/mlx5_0 port 2 has no cable in the topology"},
		{name: "adaptive spine", text: trace, ar: "spine-r0-01",
			unknown: "two-tier.txt:3: adaptive routing on spine-r0-01: the path is chosen per packet"},
		{name: "adaptive elsewhere", text: trace, ar: "leaf-r1-00, spine-r1-01"},
		{name: "adaptive everywhere", text: trace, ar: "all", unknown: "two-tier.txt:2: adaptive routing on leaf-r0-00"},
		{name: "port with no cable", text: edit("[34] -> switch", "[35] -> switch"),
			unknown: "two-tier.txt:3: hop 2, leaf-r0-00:35 has no cable in the topology"},
		{name: "recabled", text: edit("[34] -> switch", "[33] -> switch"),
			unknown: "hop 2, the topology cables leaf-r0-00:33 to spine-r0-00:1, not to spine-r0-01:1"},
		{name: "new LIDs", text: edit("lid 1-1", "lid 21-21"),
			unknown: `two-tier.txt:2: hop 1, GUID 0x0c42a10300aa0000, LID 21 ("leaf-r0-00") is leaf-r0-00, which has LID 1 in the topology`},
		{name: "LID of another device", text: edit(spineGUID+"[1] lid 6-6 \"spine-r0-01\"", "{0x0c42a10300cc0f01}[1] lid 6-6 \"spine-x\""),
			unknown: "the topology has LID 6 for spine-r0-01"},
		{name: "unknown source", text: edit("From ca {0x0c42a10300bb0100} portnum 1 lid 9-9", "From ca {0x0c42a10300bb0f00} portnum 1 lid 19-19"),
			unknown: `two-tier.txt:1: the source, GUID 0x0c42a10300bb0f00, LID 19 ("node-01 mlx5_0") is not in the topology`},
		{name: "from a switch", text: join(`From switch {0x0c42a10300aa0000} portnum 0 lid 1-1 "leaf-r0-00"`, spine, leaf2, ca, to),
			unknown: "two-tier.txt:1: the trace starts at switch leaf-r0-00"},
		{name: "to a switch", text: join(from, leaf, spine, `To switch {0x0c42a10300cc0001} portnum 0 lid 6-6 "spine-r0-01"`),
			unknown: "two-tier.txt:4: the trace ends at switch spine-r0-01"},
		{name: "to itself", text: join(from, strings.Replace(from, "From", "To", 1)),
			unknown: "two-tier.txt:2: the trace starts and ends at node-01/mlx5_0"},
		{name: "through an HCA", text: join(from, leaf, `[2] -> ca port {0x0c42a10300bb0200}[1] lid 11-11 "node-02 mlx5_0"`, leaf2, ca, to),
			unknown: "two-tier.txt:3: hop 2 reaches HCA node-02/mlx5_0 before the end"},
		{name: "cut in the first line", text: "From ca {0x0c42a103",
			unknown: "two-tier.txt:1: the output stops in this line, before any From line"},
		{name: "cut, no newline", text: join(from, leaf, spine) + "[2] -> switch po",
			unknown: "two-tier.txt:4: the output stops after spine-r0-01 without a To line"},

		{name: "empty", text: "", err: "two-tier.txt: no From line and no ibtracert error"},
		{name: "not a trace", text: "Usage: ibtracert [options] <src-addr> <dest-addr>\n", err: `two-tier.txt:1: "Usage: ibtracert`},
		{name: "second trace", text: trace + trace, err: "two-tier.txt:7: From line: a second trace (the first starts on line 1)"},
		{name: "To first", text: join(to, from), err: "two-tier.txt:1: To line: a To line before any From line"},
		{name: "two To lines", text: trace + to + "\n", err: "two-tier.txt:7: To line: a second To line (the first is on line 6)"},
		{name: "hop after To", text: trace + ca + "\n", err: "two-tier.txt:7: hop: a hop after the To line"},
		{name: "no hop, other To", text: join(from, to), err: "two-tier.txt:2: To line: no hop between From (line 1) and a different To node"},
		{name: "bad From", text: edit("lid 9-9", "lid 9-x"), err: `two-tier.txt:1: From line: "From ca {0x0c42a10300bb0100} portnum 1 lid 9-x`},
		{name: "bad hop", text: edit("[1] lid 6-6", "[1] lid 6"), err: "two-tier.txt:3: hop: "},
		{name: "out port", text: edit("[34] ->", "[340] ->"), err: "two-tier.txt:3: out port: 340: ports are numbered 0 to 255"},
		{name: "node port", text: edit("[34] lid 2-2", "[256] lid 2-2"), err: "two-tier.txt:4: port: 256"},
		{name: "LID bits", text: edit("lid 15-15", "lid 70000-70000"), err: "two-tier.txt:5: lid: 70000-70000: LIDs are 16 bits"},
		{name: "LID range", text: edit("lid 9-9", "lid 9-10"), err: "two-tier.txt:1: lid: 9-10 is not the LIDs of one port"},
		{name: "-n From port", text: "From {0x0c42a10300bb0100}[300]\n", err: "two-tier.txt:1: port: 300"},
		{name: "-n hop port", text: "From {0x0c42a10300bb0100}[1]\n[1] -> {0x0c42a10300aa0000}[300]\n", err: "two-tier.txt:2: port: 300"},
		{name: "source port", text: edit("[1] -> switch port {0x0c42a10300aa0000}", "[2] -> switch port {0x0c42a10300aa0000}"),
			err: "two-tier.txt:2: out port: 2, but the From line says the source's port is 1"},
	} {
		topo := tc.topo
		if topo == nil {
			topo = fabric
		}
		p, err := ParseIBTracert("two-tier.txt", []byte(tc.text), topo, adaptive(t, topo, tc.ar))
		var fe *FileError
		switch {
		case tc.err != "" && (err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v\n want a *FileError saying %s", tc.name, err, tc.err)
		case tc.err != "":
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.unknown == "" && strings.Join(linkNames(topo, p.Links), "|") != cmp.Or(tc.path, twoTierPath):
			t.Errorf("%s: %v, unknown %q; want %s", tc.name, linkNames(topo, p.Links), p.Unknown, cmp.Or(tc.path, twoTierPath))
		case tc.unknown != "" && !strings.Contains(p.Unknown, tc.unknown):
			t.Errorf("%s: unknown %q, links %v\n want it to say %s", tc.name, p.Unknown, p.Links, tc.unknown)
		default:
			checkIBPath(t, topo, p)
		}
	}
}

func TestParseAdaptive(t *testing.T) {
	fabric := loadIBNet(t, "fabric-2tier.txt")
	spine, _ := fabric.Switch("spine-r0-01")
	leaf, _ := fabric.Switch("leaf-r1-00")
	for _, tc := range []struct {
		list string
		on   []int
		all  bool
		err  string
	}{
		{list: ""},
		{list: "# none yet\n\n"},
		{list: "spine-r0-01\n0x0c42a10300aa0100  # leaf-r1-00 by GUID\n", on: []int{spine, leaf}},
		{list: "spine-r0-01, leaf-r1-00", on: []int{spine, leaf}},
		{list: "all", all: true},
		{list: "spine-r0-01\nspine-9", err: `--adaptive:2: switch: no switch "spine-9" in the topology`},
		{list: "0x0c42a10300bb0100", err: `--adaptive:1: switch: no switch "0x0c42a10300bb0100"`}, // an HCA's GUID
		{list: "0x", err: `no switch "0x"`},
	} {
		a, err := ParseAdaptive("--adaptive", []byte(tc.list), fabric)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %s", tc.list, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.list, err)
		}
		want := map[int]bool{}
		for _, s := range tc.on {
			want[s] = true
		}
		for s := range fabric.Switches {
			if a.On(s) != (tc.all || want[s]) {
				t.Errorf("%q: switch %s: adaptive %v", tc.list, fabric.Switches[s].Name, a.On(s))
			}
		}
	}
}

func FuzzParseIBTracert(f *testing.F) {
	files, _ := filepath.Glob("testdata/ibtrace/*.txt")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	fabric := loadIBNet(f, "fabric-2tier.txt")
	ar := adaptive(f, fabric, "leaf-r1-00")
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseIBTracert("f.txt", data, fabric, ar)
		var fe *FileError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("error %v is no *FileError", err)
		}
		if err == nil {
			checkIBPath(t, fabric, p)
		}
	})
}

func FuzzParseAdaptive(f *testing.F) {
	f.Add([]byte("spine-r0-01, 0x0c42a10300aa0100 # c\nall\n"))
	fabric := loadIBNet(f, "fabric-2tier.txt")
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseAdaptive("f.txt", data, fabric)
		var fe *FileError
		if err != nil && (!errors.As(err, &fe) || a.On(0)) {
			t.Fatalf("error %v is no *FileError, or switches came with it", err)
		}
	})
}
