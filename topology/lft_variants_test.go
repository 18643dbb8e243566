package topology

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// rail0Lines is the rail 0 dump, one string a line: 1-12 leaf-r0-00,
// 13-24 spine-r0-00, 25-36 spine-r0-01, 37-48 leaf-r0-01 (line n at
// index n-1), then dump_lfts.sh's warning.
func rail0Lines(tb testing.TB) []string {
	tb.Helper()
	return strings.Split(readTestdata(tb, "lft/rail0-dump_lfts.txt"), "\n")
}

// osmDump turns the rail 0 dump into OpenSM's opensm-lfts.dump form.
func osmDump(lines []string) string {
	lid := map[string]string{"leaf-r0-00": "1", "leaf-r0-01": "2", "spine-r0-00": "5", "spine-r0-01": "6"}
	header := regexp.MustCompile(`^Unicast lids \[0x0-0xf\] of switch DR path [^g]*guid (\S+) \((.*)\):$`)
	var out []string
	for _, l := range lines {
		switch {
		case header.MatchString(l):
			m := header.FindStringSubmatch(l)
			l = "Unicast lids [0-15] of switch Lid " + lid[m[2]] + " guid " + m[1] + " ('" + m[2] + "'):"
		case strings.HasPrefix(l, "0x"):
			head, info, _ := strings.Cut(l, " : (")
			l = head + " # " + strings.TrimSuffix(info, ")")
		case strings.HasSuffix(l, "valid lids dumped "):
			l = "15 lids dumped"
		case strings.HasPrefix(l, " "), strings.HasPrefix(l, "*"):
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func TestLFTVariants(t *testing.T) {
	fabric := loadIBNet(t, "fabric-2tier.txt")
	var plan bytes.Buffer
	if err := fabric.WritePlan(&plan); err != nil {
		t.Fatal(err)
	}
	planTopo, err := ParsePlan("plan.yaml", plan.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	lines := rail0Lines(t)
	text := strings.Join(lines, "\n")
	// set replaces line n (from 1) of the dump; drop removes it.
	const drop = "\x00"
	set := func(pairs ...any) string {
		l := slices.Clone(lines)
		for i := 0; i < len(pairs); i += 2 {
			l[pairs[i].(int)-1] = pairs[i+1].(string)
		}
		return strings.Join(slices.DeleteFunc(l, func(s string) bool { return s == drop }), "\n")
	}
	const unreadSpine = "SubnGet(LFT) failed on switch 'spine-r0-01' DR path slid 0; dlid 0; 0,1,34 Node GUID 0xc42a10300cc0001 SMA LID 6; MAD status 0x1c AM 0x%s"
	for _, tc := range []struct {
		name, text string
		topo       *Topology // fabric when nil
		ar         string
		flow       uint32
		unknown    string // node-01 -> node-04 on rail 0 must be unknown saying this; "" = the two-tier path
		err        string // or the parse must fail saying this
	}{
		{name: "as is", text: text},
		{name: "OpenSM's dump", text: osmDump(lines)},
		{name: "-n", text: regexp.MustCompile(` : \(.*\)`).ReplaceAllString(text, "")},
		{name: "CRLF", text: strings.ReplaceAll(text, "\n", "\r\n")},
		{name: "chatter", text: "ibwarn: [901] dump_unicast_tables: illegal lft top 49152, truncate to 49151\nibdebug: [901] dump_node: x\n" + text},
		{name: "a switch the topology lacks", text: text + strings.ReplaceAll(strings.Join(lines[:12], "\n"), "0x0c42a10300aa0000 (leaf-r0-00)", "0x0c42a10300dd0000 (spine-x)")},
		{name: "plan: matched by name", text: text, topo: planTopo, unknown: "the topology has no LID for node-04/mlx5_0"},
		{name: "an unread block elsewhere", text: strings.Replace(unreadSpine, "%s", "1", 1) + "\n" + text},
		{name: "an unread block of another switch", text: strings.Replace(strings.Replace(unreadSpine, "%s", "0", 1), "cc0001", "dd0001", 1) + "\n" + text},

		{name: "adaptive", text: text, ar: "spine-r0-01", unknown: "adaptive routing on spine-r0-01: the path is chosen per packet"},
		{name: "past the unicast LIDs", text: text, flow: 0xC000, unknown: "LID 15 + 49152 is not a unicast LID"},
		{name: "flow wrapping 32 bits", text: text, flow: 0xFFFFFFF1, unknown: "LID 15 + 4294967281 is not a unicast LID"},
		{name: "-a: illegal port", text: set(11, "0x000f 041 : (illegal port)"),
			unknown: "rail0.txt:1: leaf-r0-00 has no out port for LID 15: the subnet manager left it unrouted"},
		{name: "cut before its count", text: set(10, drop, 11, drop, 12, drop),
			unknown: "rail0.txt:1: leaf-r0-00's table stops before LID 15, with no \"lids dumped\" line: cut short or its read failed"},
		{name: "ibroute's read failed", text: set(11, drop, 12, "SubnGet() failed; MAD status 0x1c AM 0x0"),
			unknown: "leaf-r0-00's table stops before LID 15, with no \"lids dumped\" line: cut short or its read failed; the dump says line 11: SubnGet() failed; MAD status 0x1c AM 0x0"},
		{name: "cut in a line", text: strings.Join(lines[:45], "\n") + "\n0x000d 001 : (Chan",
			unknown: "rail0.txt:37: leaf-r0-01's table stops before LID 15"},
		{name: "dump_fts could not read a block", text: strings.Replace(unreadSpine, "%s", "0", 1) + "\n" + text,
			unknown: "rail0.txt:1: dump_fts could not read the block of spine-r0-01's table holding LID 15"},
		{name: "outside the range", text: set(37, strings.Replace(lines[36], "0x0-0xf", "0x0-0xd", 1), 47, drop, 48, "7 valid lids dumped "),
			unknown: "rail0.txt:37: LID 15 is outside the LIDs 0x0-0xd of leaf-r0-01's table"},
		{name: "new LIDs", text: set(1, strings.Replace(lines[0], "DR path slid 0; dlid 0; 0,1", "Lid 21", 1)),
			unknown: `rail0.txt:1: GUID 0x0c42a10300aa0000, LID 21 ("leaf-r0-00") is leaf-r0-00, which has LID 1 in the topology`},
		{name: "to the switch itself", text: set(11, "0x000f 000"), unknown: "rail0.txt:1: leaf-r0-00's table sends LID 15 to the switch itself (port 0)"},
		{name: "no cable", text: set(11, "0x000f 035"), unknown: "rail0.txt:1: leaf-r0-00 sends LID 15 out of port 35, which has no cable in the topology"},
		{name: "loop", text: set(35, "0x000f 001"), unknown: "LID 15 loops: the tables send it back to leaf-r0-00"},
		{name: "another HCA", text: set(47, "0x000f 001"),
			unknown: "LID 15 leads to node-03/mlx5_0, not node-04/mlx5_0: the topology's LIDs are not the fabric's"},
		{name: "a table missing", text: strings.Join(slices.Concat(lines[:24], []string{"ibroute: iberror: failed: dump tables: node info failed: valid addr?"}, lines[36:]), "\n"),
			unknown: "rail0.txt: no table of spine-r0-01 in the dump; the dump says line 25: dump tables: node info failed: valid addr?"},

		{name: "empty", text: "", err: `rail0.txt: no "Unicast lids" blocks`},
		{name: "no fabric", text: "Failed to discover fabric\n", err: "rail0.txt:1: no forwarding table in the dump; the tool said: Failed to discover fabric"},
		{name: "another fabric", text: strings.ReplaceAll(text, "guid 0x0c42a10300", "guid 0x0c42a10399"),
			err: `rail0.txt:1: switch: GUID 0x0c42a10399aa0000 ("leaf-r0-00") is not in the topology (a device added or replaced since it was read?); none of the 4 switches dumped is in the topology`},
		{name: "an HCA's GUID", text: set(1, strings.Replace(lines[0], "0x0c42a10300aa0000", "0x0c42a10300bb0100", 1)),
			err: "rail0.txt:1: switch: GUID 0x0c42a10300bb0100 is HCA node-01/mlx5_0 in the topology"},
		{name: "twice", text: text + text, err: "rail0.txt:53: switch: leaf-r0-00 is dumped twice (also on line 1)"},
		{name: "multicast", text: "Multicast mlids [0xc000-0xc001] of switch Lid 1 guid 0x0c42a10300aa0000 (leaf-r0-00):\n",
			err: "rail0.txt:1: a multicast table"},
		{name: "entry first", text: "0x0001 000\n" + text, err: "rail0.txt:1: entry: an LFT entry outside a switch's block"},
		{name: "bad entry", text: set(4, "0x0001 abc"), err: `rail0.txt:4: entry: "0x0001 abc" is not 0xLID PORT`},
		{name: "multicast LID", text: set(4, "0xc000 001"), err: "rail0.txt:4: LID: 0xc000 is not a unicast LID"},
		{name: "beyond the header", text: set(11, lines[10]+"\n0x0010 001", 12, "9 valid lids dumped "),
			err: "rail0.txt:12: LID: 0x0010 is outside the block's LIDs [0x0-0xf] (line 1)"},
		{name: "out of order", text: set(5, lines[6], 7, lines[4]), err: "rail0.txt:6: LID: 0x0005 after 0x0006"},
		{name: "port", text: set(11, "0x000f 256"), err: "rail0.txt:11: out port: 256"},
		{name: "destination", text: set(11, "0x000f 034 node-04"), err: `rail0.txt:11: destination: "node-04"`},
		{name: "count", text: set(12, "9 valid lids dumped "), err: "rail0.txt:12: count: 9 lids, but the block (line 1) lists 8"},
		{name: "count first", text: "8 valid lids dumped\n" + text, err: `rail0.txt:1: count: a "lids dumped" line outside`},
		{name: "header", text: set(1, "Unicast lids [0x0-0xf] of switch Lid 1 guid 0x0c42a10300aa0000:"), err: "rail0.txt:1: header: "},
		{name: "range", text: set(1, strings.Replace(lines[0], "0x0-0xf", "0xf-0x0", 1)), err: "rail0.txt:1: LID range: [0xf-0x0]"},
		{name: "mixed range", text: set(1, strings.Replace(lines[0], "0x0-0xf", "0-0xf", 1)), err: "rail0.txt:1: LID range: [0-0xf]"},
		{name: "switch LID", text: set(1, strings.Replace(lines[0], "DR path slid 0; dlid 0; 0,1", "Lid 70000", 1)),
			err: "rail0.txt:1: switch: Lid 70000: LIDs are 16 bits"},
		{name: "not a dump", text: "Switch\t40 \"S-0c42a10300aa0000\"\n", err: "rail0.txt:1: \"Switch\\t40"},
	} {
		topo := tc.topo
		if topo == nil {
			topo = fabric
		}
		l, err := ParseLFTs("rail0.txt", []byte(tc.text), topo)
		var fe *FileError
		switch {
		case tc.err != "" && (err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v\n want a *FileError saying %s", tc.name, err, tc.err)
			continue
		case tc.err != "":
			continue
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		p := l.Path(hcaOf(t, topo, "node-01", 0), hcaOf(t, topo, "node-04", 0), tc.flow, adaptive(t, topo, tc.ar))
		checkIBPath(t, topo, p)
		switch got := strings.Join(linkNames(topo, p.Links), "|"); {
		case tc.unknown == "" && got != twoTierPath:
			t.Errorf("%s: %s (unknown %q)\n want %s", tc.name, got, p.Unknown, twoTierPath)
		case tc.unknown != "" && !strings.Contains(p.Unknown, tc.unknown):
			t.Errorf("%s: unknown %q, path %s\n want it to say %s", tc.name, p.Unknown, got, tc.unknown)
		}
	}
}

func FuzzParseLFTs(f *testing.F) {
	files, _ := filepath.Glob("testdata/lft/*.txt")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("Unicast lids [0x0-0xb] of switch Lid 1 guid 0x0c42a10300aa0000 (leaf-r0-00):\n0x0001 000\n0x000b 002\n2 valid lids dumped\n"))
	fabric := loadIBNet(f, "fabric-2tier.txt")
	ar := adaptive(f, fabric, "spine-r1-00")
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseLFTs("f.txt", data, fabric)
		var fe *FileError
		switch {
		case err != nil && !errors.As(err, &fe):
			t.Fatalf("error %v is no *FileError", err)
		case err != nil:
			return
		}
		for src := range fabric.HCAs {
			for dst := range fabric.HCAs {
				for flow := range uint32(2) {
					p := l.Path(src, dst, flow, ar)
					checkIBPath(t, fabric, p)
					if p.Known() && (p.Src != src || p.Dst != dst) {
						t.Fatalf("path from %d to %d for %d -> %d", p.Src, p.Dst, src, dst)
					}
				}
			}
		}
	})
}
