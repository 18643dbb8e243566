package linkplan

import (
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/topology"
)

func tree(t *testing.T, spec string) (*topology.Topology, []Member) {
	t.Helper()
	ft, topo, err := topology.GenerateFatTree(spec)
	if err != nil {
		t.Fatal(err)
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

// switchCables counts the cables between switches of rail r's plane.
func switchCables(topo *topology.Topology, r int) int {
	n := 0
	for _, c := range topo.Cables {
		if !c.A.IsHCA() && !c.B.IsHCA() && topo.Switches[c.A.Switch].Plane == r {
			n++
		}
	}
	return n
}

func TestLinksCoverEveryLinkWithinTheBound(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		bound func(cables int) int // directional tests a rail may take
	}{
		// Two tiers: 2·L·S, one test a direction of each cable twice over.
		{"nodes=32,rails=2,leaf=4,spines=4", func(c int) int { return 2 * c }},
		{"nodes=64,rails=2,leaf=8,spines=4", func(c int) int { return 2 * c }}, // two cables from each leaf to each spine
		{"nodes=18,rails=1,leaf=6,spines=3", func(c int) int { return 2 * c }}, // three leaves
		{"nodes=8,rails=1,leaf=4,spines=2", func(c int) int { return 2 * c }},  // two leaves
		{"nodes=64,rails=2,leaf=8,spines=4,ll=ib", func(c int) int { return 2 * c }},
		// Three tiers: a test crosses four switch links, and the core links
		// want tests between pods.
		{"nodes=128,rails=1,leaf=8,spines=4,pods=4,cores=8", func(c int) int { return 2 * c }},
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
				cables := switchCables(topo, pc.Rail)
				if pc.Links != 2*cables {
					t.Errorf("rail %d: %d link directions, want %d", pc.Rail, pc.Links, 2*cables)
				}
				if pc.Covered != pc.Links || len(pc.Uncovered) > 0 || pc.MinTests < Need {
					t.Errorf("rail %d: %d of %d covered, min %d tests: %+v", pc.Rail, pc.Covered, pc.Links, pc.MinTests, pc.Uncovered)
				}
				if b := tc.bound(cables); pc.Tests > b {
					t.Errorf("rail %d: %d tests for %d switch cables, want at most %d", pc.Rail, pc.Tests, cables, b)
				}
				t.Logf("rail %d: %d cables, %d tests, %d-%d a link direction", pc.Rail, cables, pc.Tests, pc.MinTests, pc.MaxTests)
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
