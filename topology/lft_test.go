package topology

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

func parseLFTs(tb testing.TB, name, text string, topo *Topology) *LFTs {
	tb.Helper()
	l, err := ParseLFTs(name, []byte(text), topo)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// sameAsRoute fails unless walking the tables gives Route's path for
// every pair of HCAs and LMC offset, and an unknown path where Route
// finds none (HCAs on different rails).
func sameAsRoute(t *testing.T, topo *Topology, l *LFTs, lmc uint) (known int) {
	t.Helper()
	for src := range topo.HCAs {
		for dst := range topo.HCAs {
			for off := uint32(0); off < 1<<lmc; off++ {
				want, ok := topo.Route(nil, src, dst, off)
				got := l.Path(src, dst, off, Adaptive{})
				checkIBPath(t, topo, got)
				switch {
				case !ok && got.Known():
					t.Fatalf("%s -> %s +%d: Route finds no path, the tables %v", topo.HCAName(src), topo.HCAName(dst), off, linkNames(topo, got.Links))
				case ok && !slices.Equal(got.Links, want):
					t.Fatalf("%s -> %s +%d: tables give %v (%s)\n Route %v", topo.HCAName(src), topo.HCAName(dst), off,
						linkNames(topo, got.Links), got.Unknown, linkNames(topo, want))
				case ok && got.DLID != topo.HCAs[dst].LID+uint16(off):
					t.Fatalf("%s -> %s +%d: walked LID %d", topo.HCAName(src), topo.HCAName(dst), off, got.DLID)
				case ok:
					known++
				}
			}
		}
	}
	return known
}

func TestLFTFixtures(t *testing.T) {
	fabric := loadIBNet(t, "fabric-2tier.txt")
	rail0 := parseLFTs(t, "rail0-dump_lfts.txt", readTestdata(t, "lft/rail0-dump_lfts.txt"), fabric)
	// The dump holds rail 0's switches, routed d-mod-k: rail 0 walks as
	// Route goes, rail 1 has no tables.
	for _, src := range []string{"node-01", "node-02", "node-03", "node-04"} {
		for _, dst := range []string{"node-01", "node-02", "node-03", "node-04"} {
			s, d := hcaOf(t, fabric, src, 0), hcaOf(t, fabric, dst, 0)
			want, _ := fabric.Route(nil, s, d, 0)
			if got := rail0.Path(s, d, 0, Adaptive{}); !slices.Equal(got.Links, want) {
				t.Errorf("%s -> %s: %v (%s), Route %v", src, dst, linkNames(fabric, got.Links), got.Unknown, linkNames(fabric, want))
			}
		}
	}
	src, dst := hcaOf(t, fabric, "node-01", 0), hcaOf(t, fabric, "node-04", 0)
	trace, err := ParseIBTracert("two-tier.txt", []byte(readTestdata(t, "ibtrace/two-tier.txt")), fabric, Adaptive{})
	if got := rail0.Path(src, dst, 0, Adaptive{}); err != nil || !slices.Equal(got.Links, trace.Links) {
		t.Errorf("the tables give %v, ibtracert %v (%v)", linkNames(fabric, got.Links), linkNames(fabric, trace.Links), err)
	}
	for _, tc := range []struct {
		src, dst string
		srcRail  int
		dstRail  int
		want     string
	}{
		{"node-01", "node-02", 1, 1, "rail0-dump_lfts.txt: no table of leaf-r1-00 in the dump"},
		{"node-01", "node-03", 0, 1, "rail0-dump_lfts.txt:1: leaf-r0-00 has no out port for LID 14: the subnet manager left it unrouted"},
	} {
		p := rail0.Path(hcaOf(t, fabric, tc.src, tc.srcRail), hcaOf(t, fabric, tc.dst, tc.dstRail), 0, Adaptive{})
		if p.Known() || p.Unknown != tc.want {
			t.Errorf("%s -> %s: %q, want %q", tc.src, tc.dst, p.Unknown, tc.want)
		}
	}

	// LMC 1: each CA has two LIDs, routed over different spines.
	lmcTopo := loadIBNet(t, "lmc-2tier.txt")
	lmc := parseLFTs(t, "lmc-ibroute.txt", readTestdata(t, "lft/lmc-ibroute.txt"), lmcTopo)
	if n := sameAsRoute(t, lmcTopo, lmc, 1); n != 4*4*2 {
		t.Errorf("%d known paths, want 32", n)
	}
	src, dst = hcaOf(t, lmcTopo, "node-01", 0), hcaOf(t, lmcTopo, "node-03", 0)
	base, other := lmc.Path(src, dst, 0, Adaptive{}), lmc.Path(src, dst, 1, Adaptive{})
	if got := strings.Join(linkNames(lmcTopo, other.Links), "|"); got != lmcPath || base.Links[1] == other.Links[1] {
		t.Errorf("LID 11: %s; want %s, and LID 10 over the other spine", got, lmcPath)
	}
	trace, err = ParseIBTracert("lmc-dlid11.txt", []byte(readTestdata(t, "ibtrace/lmc-dlid11.txt")), lmcTopo, Adaptive{})
	if err != nil || !slices.Equal(trace.Links, other.Links) {
		t.Errorf("ibtracert to LID 11: %v (%v), the tables %v", linkNames(lmcTopo, trace.Links), err, lmcPath)
	}
}

// withIDs rebuilds a generated tree with what a subnet manager hands out:
// GUIDs, HCA base LIDs aligned for LMC lmc, switch LIDs above them.
func withIDs(tb testing.TB, topo *Topology, lmc uint) *Topology {
	tb.Helper()
	sw, hcas := slices.Clone(topo.Switches), slices.Clone(topo.HCAs)
	top := uint16(0)
	for i := range hcas {
		hcas[i].GUID = fmt.Sprintf("0x%016x", 0x0002c90300b00000+i)
		hcas[i].LID <<= lmc
		top = max(top, hcas[i].LID+1<<lmc)
	}
	for i := range sw {
		sw[i].GUID = fmt.Sprintf("0x%016x", 0x0002c90300a00000+i)
		sw[i].LID = top + uint16(i)
	}
	out, err := New(InfiniBand, sw, hcas, slices.Clone(topo.Cables))
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// renderLFTs writes, as ibroute -n prints them, the tables a subnet
// manager routing as Route does would give every switch: for each
// destination LID (each HCA's base LID plus every LMC offset) the port
// Route leaves each switch by towards it. A table has one entry per LID,
// so Route leaving one switch by two ports for one LID fails the test.
// Switches without a GUID get one the topology does not know, as real
// switches have, so that they are matched by name.
func renderLFTs(tb testing.TB, topo *Topology, lmc uint) string {
	tb.Helper()
	type key struct {
		sw  int
		lid uint16
	}
	port := map[key]int{}
	for src := range topo.HCAs {
		for dst := range topo.HCAs {
			for off := uint32(0); off < 1<<lmc; off++ {
				p, ok := topo.Route(nil, src, dst, off)
				if !ok {
					continue
				}
				lid := topo.HCAs[dst].LID + uint16(off)
				for _, l := range p {
					from := topo.LinkFrom(l)
					if from.IsHCA() {
						continue
					}
					k := key{from.Switch, lid}
					if old, seen := port[k]; seen && old != from.Port {
						tb.Fatalf("Route leaves %s by ports %d and %d for LID %d", topo.Switches[from.Switch].Name, old, from.Port, lid)
					}
					port[k] = from.Port
				}
			}
		}
	}
	var b strings.Builder
	for s, sw := range topo.Switches {
		entries := map[uint16]int{}
		for k, p := range port {
			if k.sw == s {
				entries[k.lid] = p
			}
		}
		where := "DR path slid 0; dlid 0; 0,1"
		if sw.LID != 0 {
			where, entries[sw.LID] = fmt.Sprintf("Lid %d", sw.LID), 0
		}
		lids := make([]int, 0, len(entries))
		for lid := range entries {
			lids = append(lids, int(lid))
		}
		sort.Ints(lids)
		guid := sw.GUID
		if guid == "" {
			guid = fmt.Sprintf("0x%016x", 0x0008f10400400000+s)
		}
		fmt.Fprintf(&b, "Unicast lids [0x0-0x%x] of switch %s guid %s (%s):\n  Lid  Out   Destination\n       Port     Info \n",
			slices.Max(append(lids, 0)), where, guid, sw.Name)
		for _, lid := range lids {
			fmt.Fprintf(&b, "0x%04x %03d \n", lid, entries[uint16(lid)])
		}
		fmt.Fprintf(&b, "%d valid lids dumped \n", len(lids))
	}
	return b.String()
}

// TestLFTsAgreeWithRoute: tables rendered from Route's choices on
// generated InfiniBand trees, read back and walked, give Route's paths,
// for every pair and every LID of an LMC > 0 port.
func TestLFTsAgreeWithRoute(t *testing.T) {
	for _, tc := range []struct {
		spec string
		lmc  uint
		ids  bool
	}{
		{"nodes=32,rails=2,leaf=8,spines=4,ll=ib", 0, true},
		{"nodes=32,rails=1,leaf=4,spines=2,pods=4,cores=4,ll=ib", 0, false}, // no GUIDs: matched by name
		{"nodes=16,rails=1,leaf=4,spines=4,ll=ib", 2, true},
		{"nodes=32,rails=1,leaf=4,spines=2,pods=2,cores=4,ll=ib", 1, true},
	} {
		topo := mustTree(t, tc.spec)
		if tc.ids || tc.lmc > 0 {
			topo = withIDs(t, topo, tc.lmc)
		}
		text := renderLFTs(t, topo, tc.lmc)
		l := parseLFTs(t, tc.spec, text, topo)
		known := sameAsRoute(t, topo, l, tc.lmc)
		ft, _ := ParseFatTree(tc.spec)
		if want := ft.Rails * ft.Nodes * ft.Nodes << tc.lmc; known != want {
			t.Errorf("%s: %d known paths, want %d", tc.spec, known, want)
		}
	}
}
