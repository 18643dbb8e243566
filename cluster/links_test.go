package cluster

import (
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/coordinator"
	"github.com/rdmamesh/rdmamesh/coordinator/linkplan"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/topology"
)

// A links sweep steers few tests over every leaf-spine link: 2·L·S
// directional tests on 3 leaves x 2 spines, all passing, and the traced
// paths of their data flows cross every link direction at least twice.
func TestLinkSweepCoversEveryLinkTwice(t *testing.T) {
	cl := startTraced(t, oneCablePerSpine)
	info, m := sweepWith(t, cl, api.SweepRequest{Pattern: "links"})
	if m.Outcome() != matrix.OutcomePass {
		t.Fatalf("outcome %s:\n%s", m.Outcome(), m.Summary())
	}
	const bound = 2 * 3 * 2
	tested := 0
	for _, r := range m.Cells {
		if r.Verdict != matrix.VerdictUntested {
			tested++
		}
	}
	if tested == 0 || tested > bound || info.Cells != tested {
		t.Fatalf("%d cells tested (the sweep planned %d), want 1 to %d", tested, info.Cells, bound)
	}
	paths, _ := cl.Coord.SweepPaths(info.ID)
	through := map[string]int{}
	for _, p := range paths {
		if p.Back {
			continue
		}
		for _, l := range p.Links {
			through[l]++
		}
	}
	topo := cl.Coord.Topology()
	for c, cb := range topo.Cables {
		if cb.A.IsHCA() || cb.B.IsHCA() {
			continue
		}
		for _, l := range []topology.Link{topology.Link(2 * c), topology.Link(2*c + 1)} {
			if n := through[topo.LinkName(l)]; n < 2 {
				t.Errorf("%s: %d traced tests, want 2", topo.LinkName(l), n)
			}
		}
	}
	cov, ok := cl.Coord.SweepCoverage(info.ID)
	if !ok || cov == nil || len(cov.Planes) != 1 || cov.Traced != tested || cov.Unknown != 0 {
		t.Fatalf("coverage %+v", cov)
	}
	if p := cov.Planes[0]; p.Links != 12 || p.Covered != 12 || p.MinTests != 2 || len(p.Uncovered) != 0 {
		t.Fatalf("rail 0's coverage %+v, want all 12 link directions with 2 tests", p)
	}
	t.Logf("%d cells in %d rounds", tested, info.Rounds)
}

// Without a topology there is nothing to steer by: the sweep is refused,
// naming the setting that gives one.
func TestLinkSweepWithoutTopologyRefused(t *testing.T) {
	cl := startSweepDefaults(t, 4, coordinator.SweepDefaults{})
	_, err := cl.Coord.StartSweep(t.Context(), api.SweepRequest{Pattern: "fabric"})
	if err == nil || !strings.Contains(err.Error(), "coordinator.topology") {
		t.Fatalf("a fabric sweep without a topology: %v", err)
	}
}

// An all-pairs sweep on the same fabric covers the links too, by many
// more tests; a link whose routes were withdrawn is left short, and the
// coverage says no test's path crossed it.
func TestCoverageNamesAnUncrossedLink(t *testing.T) {
	cl := startTraced(t, oneCablePerSpine, "cable=leaf-r0-00~spine-r0-01:withdrawn")
	info, _ := sweepWith(t, cl, api.SweepRequest{Mode: "quick"})
	cov, ok := cl.Coord.SweepCoverage(info.ID)
	if !ok || cov == nil || len(cov.Planes) != 1 {
		t.Fatalf("coverage %+v", cov)
	}
	p := cov.Planes[0]
	short := map[string]string{}
	for _, u := range p.Uncovered {
		short[u.Link] = u.Why
	}
	if p.Covered != p.Links-2 || len(short) != 2 {
		t.Fatalf("coverage %+v, want the withdrawn cable's two directions short", p)
	}
	for l, why := range short {
		if !strings.Contains(l, "leaf-r0-00:") || !strings.Contains(l, "spine-r0-01:") || why != "no test's path crossed it" {
			t.Errorf("short %s: %s", l, why)
		}
	}
}

// Switches whose hash is not the topology's model send many planned
// labels elsewhere; the sweep traces each test's candidate labels first
// and runs the ones that take the planned cables, so every link is still
// crossed twice, by tests whose flows the plan did not pick.
func TestLinkSweepSteersByTraces(t *testing.T) {
	cl := startSeeded(t, oneCablePerSpine, 0x5a17c3)
	info, m := sweepWith(t, cl, api.SweepRequest{Pattern: "links", Retests: new(int)})
	if m.Outcome() != matrix.OutcomePass {
		t.Fatalf("outcome %s:\n%s", m.Outcome(), m.Summary())
	}
	var members []linkplan.Member
	for _, n := range m.Nodes {
		members = append(members, linkplan.Member{Name: n.Name, Rails: []int{0}})
	}
	plan, err := linkplan.Links(cl.Coord.Topology(), members)
	if err != nil {
		t.Fatal(err)
	}
	planned := map[[2]string]uint16{}
	for i, p := range plan.Pairs {
		planned[[2]string{p.A, p.B}] = linkplan.Sport(plan.Steer[i][0].A)
		planned[[2]string{p.B, p.A}] = linkplan.Sport(plan.Steer[i][0].B)
	}
	moved := 0
	for _, r := range m.Cells {
		if want, ok := planned[[2]string{r.Src, r.Dst}]; ok && r.Verdict != matrix.VerdictUntested && r.Flow != want {
			moved++
		}
	}
	cov, _ := cl.Coord.SweepCoverage(info.ID)
	if cov == nil || cov.Planes[0].Covered != cov.Planes[0].Links || cov.Traced != len(plan.Pairs)*2 {
		t.Fatalf("coverage %+v", cov)
	}
	if moved == 0 {
		t.Fatal("no test left its planned label: the seeded hash should have sent some elsewhere")
	}
	t.Logf("%d of %d tests relabelled after tracing; %d of %d link directions covered", moved, 2*len(plan.Pairs), cov.Planes[0].Covered, cov.Planes[0].Links)
}

// A dead leaf-spine cable fails only the few steered tests that cross it,
// two each way; a fabric sweep names that cable from them, its pairs
// inside the leaves showing the HCAs at their ends healthy. (A links
// sweep alone gives each HCA a test or two: it cannot tell the two.)
func TestFabricSweepNamesADeadCable(t *testing.T) {
	cl := startTraced(t, oneCablePerSpine, "cable=leaf-r0-01~spine-r0-00:down")
	_, m := sweepWith(t, cl, api.SweepRequest{Pattern: "fabric", Retests: new(int)})
	if len(m.Suspects) == 0 || m.Suspects[0].Kind != matrix.KindLink ||
		!strings.HasPrefix(m.Suspects[0].Ends[0], "leaf-r0-01:") || !strings.HasPrefix(m.Suspects[0].Ends[1], "spine-r0-00:") {
		t.Fatalf("want the cable leaf-r0-01 <-> spine-r0-00 named first:\n%s", m.Summary())
	}
	t.Log(m.Suspects[0].Reason)
}

// The lab's shape: two leaves of two nodes and two spines, leaf-r0-00 ->
// spine-r0-01 dropping most of what it carries one way. Every test over
// it also crosses spine-r0-01 -> leaf-r0-01, so the counts alone cannot
// tell the two links apart; the bad tests' flows, traced with their hops
// probed for loss, can: the link is named with its direction and drop.
func TestFabricSweepHopLossNamesTheLink(t *testing.T) {
	cl := startOn(t, "nodes=4,rails=1,leaf=2,spines=2,addrs=10.255.0.0/24",
		Options{LossProbes: 300, Faults: []string{"link=leaf-r0-00>spine-r0-01:loss=90%"}})
	_, m := sweepWith(t, cl, api.SweepRequest{Pattern: "fabric", Retests: new(int)})
	if len(m.Suspects) == 0 {
		t.Fatalf("no suspect:\n%s", m.Summary())
	}
	s := m.Suspects[0]
	if s.Kind != matrix.KindLink || len(s.Ends) != 2 || !strings.HasPrefix(s.Ends[0], "leaf-r0-00:") ||
		!strings.HasPrefix(s.Ends[1], "spine-r0-01:") || s.Direction != "one-way" || s.Drop < 0.8 || s.Drop > 0.97 {
		t.Fatalf("first suspect %s %q direction %q drop %.2f, want the link leaf-r0-00 -> spine-r0-01 one way, about 0.9:\n%s",
			s.Kind, s.Ends, s.Direction, s.Drop, m.Summary())
	}
	t.Log(s.Reason)
}
