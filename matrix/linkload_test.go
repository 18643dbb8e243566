package matrix

import (
	"bytes"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/rdmamesh/rdmamesh/topology"
)

// TestLinkLoads: the directed links bad tests crossed, with their bad
// tests counted exactly (checked here by routing every bad cell by its
// flows) and the share of the tests through each that were bad. A lossy
// link stands out, its sibling beside it does not, and the list is the
// same however the matrix is held.
func TestLinkLoads(t *testing.T) {
	const tree = "nodes=8,rails=2,leaf=2,spines=2"
	const tree3 = "nodes=16,rails=1,leaf=2,spines=2,pods=2,cores=2"
	cases := []struct {
		name   string
		tree   string
		fault  dirLink // the directed link the fixture's writes fail over
		flows  bool    // false: no flow, and no fault either
		noTopo bool
		read   string // how the matrix is held: compact (""), materialised, json, summary-json
		// sibling is a link beside the fault, up from the same switch or
		// pod: its bad share must stay under half the fault's.
		sibling dirLink
		none    bool // no load at all
		// named: the analysis names the fault a link suspect, so the
		// loads must be counted before its cells are explained.
		named bool
	}{
		{name: "a lossy leaf uplink against its sibling to the other spine", tree: tree, flows: true,
			fault: dirLink{"leaf-r0-00:3", "spine-r0-00:1"}, sibling: dirLink{"leaf-r0-00:4", "spine-r0-01:1"}},
		{name: "the same, materialised", tree: tree, flows: true, read: "materialised",
			fault: dirLink{"leaf-r0-00:3", "spine-r0-00:1"}, sibling: dirLink{"leaf-r0-00:4", "spine-r0-01:1"}},
		{name: "the same, written as JSON and read back", tree: tree, flows: true, read: "json",
			fault: dirLink{"leaf-r0-00:3", "spine-r0-00:1"}, sibling: dirLink{"leaf-r0-00:4", "spine-r0-01:1"}},
		{name: "the same, in a summary without cells read back", tree: tree, flows: true, read: "summary-json",
			fault: dirLink{"leaf-r0-00:3", "spine-r0-00:1"}, sibling: dirLink{"leaf-r0-00:4", "spine-r0-01:1"}},
		{name: "a lossy uplink the analysis names, against its sibling to the same spine", tree: "nodes=32,rails=1,leaf=4,spines=2",
			flows: true, named: true, fault: dirLink{"leaf-r0-01:6", "spine-r0-00:4"}, sibling: dirLink{"leaf-r0-01:5", "spine-r0-00:3"}},
		{name: "a lossy core link of a 3-tier tree against its pod's other one", tree: tree3, flows: true,
			fault: dirLink{"spine-r0-p0-00:5", "core-r0-00:1"}, sibling: dirLink{"spine-r0-p0-01:5", "core-r0-01:1"}},
		{name: "no topology: no loads", tree: tree, flows: true, noTopo: true, none: true,
			fault: dirLink{"leaf-r0-00:3", "spine-r0-00:1"}},
		{name: "a healthy fabric: no loads", tree: tree, none: true, fault: dirLink{"leaf-r0-00:3", "spine-r0-00:1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lf := newLinkFabric(t, tc.tree, tc.flows, [2]string{tc.fault.from, tc.fault.to})
			topo := lf.topo
			if tc.noTopo {
				topo = nil
			}
			compact := AnalyseOn(topo, lf.f.nodes, nil, lf.f.cells, DefaultThresholds())
			m := readAs(t, compact, tc.read)
			if tc.none {
				if m.LinkLoads != nil {
					t.Fatalf("%d loads; want none: %+v", len(m.LinkLoads), m.LinkLoads)
				}
				return
			}
			if !reflect.DeepEqual(m.LinkLoads, compact.LinkLoads) {
				t.Fatalf("read %s, the loads differ from the compact matrix's:\n%+v\n%+v", tc.read, m.LinkLoads, compact.LinkLoads)
			}
			got := map[dirLink]LinkLoad{}
			prev := -1
			for _, l := range m.LinkLoads {
				if l.Bad < 1 || l.Tests < float64(l.Bad) || math.Abs(l.Share-float64(l.Bad)/l.Tests) > 5e-5 {
					t.Errorf("load %+v: want bad ≥ 1, tests ≥ bad, share = bad/tests", l)
				}
				lk := topology.Link(2 * l.Cable)
				if topo.EndName(topo.LinkFrom(lk)) != l.From {
					lk = lk.Reverse()
				}
				if topo.EndName(topo.LinkFrom(lk)) != l.From || topo.EndName(topo.LinkTo(lk)) != l.To {
					t.Errorf("load %+v: cable %d is %s", l, l.Cable, topo.CableName(l.Cable))
				}
				if int(lk) <= prev {
					t.Errorf("load %+v comes after link %s", l, topo.LinkName(topology.Link(prev)))
				}
				prev = int(lk)
				got[dirLink{l.From, l.To}] = l
			}
			want := routedBad(compact, lf)
			if len(want) == 0 {
				t.Fatal("no bad cell crosses a link: the case compares nothing")
			}
			for k, n := range want {
				if got[k].Bad != n {
					t.Errorf("%s → %s: %d bad; routing the bad cells gives %d", k.from, k.to, got[k].Bad, n)
				}
			}
			if len(got) != len(want) {
				t.Errorf("%d links loaded; routing the bad cells loads %d", len(got), len(want))
			}
			if named := slices.ContainsFunc(m.Suspects, func(s Suspect) bool {
				return s.Kind == KindLink && slices.Equal(s.Ends, []string{tc.fault.from, tc.fault.to})
			}); named != tc.named {
				t.Fatalf("the fault named a link suspect: %v; the case wants %v", named, tc.named)
			}
			fault, sib := got[tc.fault], got[tc.sibling]
			if fault.Share < 0.3 || sib.Share >= fault.Share/2 {
				t.Errorf("the lossy link's share %.4f (%d of %.1f), its sibling's %.4f (%d of %.1f); want ≥ 0.3 and under half of it",
					fault.Share, fault.Bad, fault.Tests, sib.Share, sib.Bad, sib.Tests)
			}
		})
	}
}

// readAs is m held as a reader would hold it.
func readAs(t *testing.T, m *Matrix, how string) *Matrix {
	t.Helper()
	switch how {
	case "":
		return m
	case "materialised":
		return m.Materialize()
	case "summary-json":
		m = m.SummaryOnly()
	}
	var buf bytes.Buffer
	if err := m.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back Matrix
	if err := back.ReadJSON(&buf); err != nil {
		t.Fatal(err)
	}
	return &back
}

// routedBad counts, per directed link, the bad tests over it the slow
// way: every bad cell (and the retested one, by its first attempt) routed
// there by its flow and back by its back flow.
func routedBad(m *Matrix, lf *linkFabric) map[dirLink]int {
	topo := lf.topo
	out := map[dirLink]int{}
	_ = m.EachCell(func(_ int, r *Result) error {
		first := r.Src == lf.retested[0] && r.Dst == lf.retested[1] && r.Rail == 0
		if r.Verdict == VerdictOK && !first || r.Verdict == VerdictUntested {
			return nil
		}
		hs, _ := topo.HCA(r.Src, r.Rail)
		hd, _ := topo.HCA(r.Dst, r.Rail)
		there, _ := topo.Route(nil, hs, hd, uint32(r.Flow))
		back, _ := topo.Route(nil, hd, hs, uint32(r.BackFlow))
		for _, lk := range append(there, back...) {
			out[dirLink{topo.EndName(topo.LinkFrom(lk)), topo.EndName(topo.LinkTo(lk))}]++
		}
		return nil
	})
	return out
}

// dirLink is a directed link by its ends' names.
type dirLink struct{ from, to string }
