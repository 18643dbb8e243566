package linkplan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/topology"
)

func tree(tb testing.TB, spec string) (*topology.Topology, []Member) {
	tb.Helper()
	ft, topo, err := topology.GenerateFatTree(spec)
	if err != nil {
		tb.Fatal(err)
	}
	var ms []Member
	for _, n := range ft.NodeNames() {
		m := Member{Name: n}
		for r := range ft.Rails {
			m.Rails = append(m.Rails, r)
		}
		ms = append(ms, m)
	}
	return topo, ms
}

// switchCables counts the cables between switches of rail r's plane, and
// those of them with a leaf at one end.
func switchCables(topo *topology.Topology, r int) (all, leaf int) {
	for _, c := range topo.Cables {
		if !c.A.IsHCA() && !c.B.IsHCA() && topo.Switches[c.A.Switch].Plane == r {
			all++
			if topo.Switches[c.A.Switch].Tier == topology.Leaf || topo.Switches[c.B.Switch].Tier == topology.Leaf {
				leaf++
			}
		}
	}
	return all, leaf
}

func TestLinksCoverEveryLinkWithinTheBound(t *testing.T) {
	// The bound is the fewest tests there can be: each crosses one leaf
	// up link and one down, and each leaf cable's two directions want two
	// tests each, so two tests a leaf cable. The cores of a three-tier
	// plane come on the way.
	for _, tc := range []struct{ spec string }{
		{"nodes=32,rails=2,leaf=4,spines=4"},
		{"nodes=64,rails=2,leaf=8,spines=4"}, // two cables from each leaf to each spine
		{"nodes=18,rails=1,leaf=6,spines=3"}, // three leaves
		{"nodes=8,rails=1,leaf=4,spines=2"},  // two leaves
		{"nodes=4,rails=1,leaf=2,spines=2"},  // the lab's Clos: 4 pairs, each needed
		{"nodes=6,rails=1,leaf=2,spines=2"},  // three leaves of two
		{"nodes=64,rails=2,leaf=8,spines=4,ll=ib"},
		{"nodes=128,rails=1,leaf=8,spines=4,pods=4,cores=8"},
		{"nodes=512,rails=1,leaf=16,spines=8,pods=4,cores=32"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			topo, ms := tree(t, tc.spec)
			plan, err := Links(topo, ms)
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Unmatched) > 0 {
				t.Errorf("unmatched: %v", plan.Unmatched)
			}
			for _, pc := range plan.Planes {
				cables, leafCables := switchCables(topo, pc.Rail)
				if pc.Links != 2*cables {
					t.Errorf("rail %d: %d link directions, want %d", pc.Rail, pc.Links, 2*cables)
				}
				if pc.Covered != pc.Links || len(pc.Uncovered) > 0 || pc.MinTests < Need {
					t.Errorf("rail %d: %d of %d covered, min %d tests: %+v", pc.Rail, pc.Covered, pc.Links, pc.MinTests, pc.Uncovered)
				}
				if pc.Tests > 2*leafCables {
					t.Errorf("rail %d: %d tests for %d leaf cables, want at most %d", pc.Rail, pc.Tests, leafCables, 2*leafCables)
				}
				t.Logf("rail %d: %d switch cables (%d at leaves), %d tests, %d-%d a link direction", pc.Rail, cables, leafCables, pc.Tests, pc.MinTests, pc.MaxTests)
			}
			checkRounds(t, topo, plan)
			t.Logf("%d pairs in %d rounds", len(plan.Pairs), len(plan.Rounds))
		})
	}
}

// checkRounds: every pair once, no node twice a round, no steered link
// twice a round.
func checkRounds(t *testing.T, topo *topology.Topology, plan Plan) {
	t.Helper()
	seen := make([]bool, len(plan.Pairs))
	for r, rd := range plan.Rounds {
		nodes, links := map[string]bool{}, map[topology.Link]bool{}
		for _, i := range rd {
			if seen[i] {
				t.Fatalf("pair %d planned twice", i)
			}
			seen[i] = true
			p := plan.Pairs[i]
			if nodes[p.A] || nodes[p.B] {
				t.Fatalf("round %d: %s or %s twice", r, p.A, p.B)
			}
			nodes[p.A], nodes[p.B] = true, true
			for _, rf := range plan.Steer[i] {
				for _, l := range append(routeLinks(topo, nil, p.A, p.B, rf.Rail, rf.A), routeLinks(topo, nil, p.B, p.A, rf.Rail, rf.B)...) {
					if links[l] {
						t.Fatalf("round %d: link %s carries two tests", r, topo.LinkName(l))
					}
					links[l] = true
				}
			}
		}
	}
	for i, ok := range seen {
		if !ok {
			t.Fatalf("pair %d in no round", i)
		}
	}
}

func TestLinksNeedsATopology(t *testing.T) {
	_, err := Links(nil, []Member{{Name: "a", Rails: []int{0}}})
	if err == nil || !strings.Contains(err.Error(), "coordinator.topology") {
		t.Errorf("no topology: %v, want it to say what to give", err)
	}
}

func TestLinksReportsWhatDoesNotMatch(t *testing.T) {
	topo, ms := tree(t, "nodes=8,rails=2,leaf=4,spines=2")
	ms = append(ms[1:], Member{Name: "stranger", Rails: []int{0}})
	ms[0].Rails = append(ms[0].Rails, 5)
	plan, err := Links(topo, ms)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"node-01: in the topology, not among the workers", "node-02 rail 5: the worker has it, the topology does not", "stranger: a worker the topology does not list"}
	if strings.Join(plan.Unmatched, "|") != strings.Join(want, "|") {
		t.Errorf("unmatched %q, want %q", plan.Unmatched, want)
	}
	for _, pc := range plan.Planes {
		if pc.Covered != pc.Links {
			t.Errorf("rail %d: %d of %d covered without node-001: %+v", pc.Rail, pc.Covered, pc.Links, pc.Uncovered)
		}
	}
}

// Two rails whose HCAs share the leaves and spines (a fabric that is not
// rail-optimized): the rails are planned in order, and rail 1 only adds
// tests for what rail 0 left short, here nothing.
func TestLinksSharedPlanes(t *testing.T) {
	var plan strings.Builder
	plan.WriteString("link_layer: roce\ncables:\n")
	for n := 1; n <= 4; n++ {
		leaf := (n - 1) / 2
		for r := range 2 {
			fmt.Fprintf(&plan, "  - {a: node-%02d/mlx5_%d, b: leaf-%d:%d}\n", n, r, leaf, 2*((n-1)%2)+r+1)
		}
	}
	for leaf := range 2 {
		for s := range 2 {
			fmt.Fprintf(&plan, "  - {a: leaf-%d:%d, b: spine-%d:%d}\n", leaf, 5+s, s, leaf+1)
		}
	}
	topo, err := topology.ParsePlan("shared.yaml", []byte(plan.String()))
	if err != nil {
		t.Fatal(err)
	}
	ms := []Member{{"node-01", []int{0, 1}}, {"node-02", []int{0, 1}}, {"node-03", []int{0, 1}}, {"node-04", []int{0, 1}}}
	p, err := Links(topo, ms)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Planes) != 2 || p.Planes[0].Covered != 8 || p.Planes[0].Links != 8 || p.Planes[0].Tests != 8 || p.Planes[1].Tests != 0 || p.Planes[1].Covered != 8 {
		t.Fatalf("planes %+v, want rail 0 to cover the 8 shared link directions in 8 tests and rail 1 to need none", p.Planes)
	}
	checkRounds(t, topo, p)
}
