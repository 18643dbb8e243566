// Package linkplan plans link sweeps: few tests, each steered onto a
// chosen path, that together cross every switch-to-switch link of the
// fabric in both directions, each direction at least twice with other
// partners, so that one bad link is told from its siblings. It is pure:
// a topology and the workers' names in, pairs, flow labels and rounds out.
//
// A test is steered by the flow label of its QPs on RoCE (the label sets
// the UDP source port that ECMP hashes) and by its destination on
// InfiniBand (the subnet manager routes by destination LID). Which path a
// label takes is the switch vendor's hash: the plan chooses by the
// topology's model of it, and the sweep checks the paths actually taken
// (Cover), so a test the real hash sent elsewhere shows as a link left
// uncovered, never as one covered.
package linkplan

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/topology"
)

// Need is how many tests with different partners each link direction
// needs: two, so that a bad link fails tests its sibling links do not
// share, and one odd pair of nodes cannot make it look bad alone.
const Need = 2

// Plan is a link sweep.
type Plan struct {
	// Pairs are tested both ways, A first, on the rails Steer lists (in
	// step with Pairs).
	Pairs  []scheduler.Pair
	Steer  [][]scheduler.RailFlow
	Rounds [][]int // indices into Pairs; no node and no link twice a round
	// Planes is the coverage the topology's model expects, per rail.
	Planes []PlaneCover
	// Unmatched lists what the topology and the workers do not agree on:
	// those HCAs are left out of the plan.
	Unmatched []string
}

// Tests is how many directional tests the plan runs: two a pair's rail.
func (p *Plan) Tests() int {
	n := 0
	for _, rails := range p.Steer {
		n += 2 * len(rails)
	}
	return n
}

// Member is a worker as the planner sees it: its name and the rails it
// can test.
type Member struct {
	Name  string
	Rails []int
}

// effort is how hard a search looks: the flow labels (or destinations on
// InfiniBand) it tries for a test through its link, how many such tests
// it scores before taking the best, and how many labels it tries for
// each one's way back. The ring looks hard for the way back that mirrors
// the way out; filling the few links the ring leaves short needs only a
// test through them, but one through a core's link is a 1 in (leaf
// uplinks x spine uplinks) draw.
type effort struct {
	tries, hits, back int
	ring              bool // a ring test: each down cable into the next leaf takes one
}

var (
	ringEffort = effort{tries: 512, hits: 32, back: 256, ring: true}
	fillEffort = effort{tries: 8192, hits: 4, back: 16}
)

// Links plans a link sweep of t for the members.
func Links(t *topology.Topology, members []Member) (Plan, error) {
	if t == nil {
		return Plan{}, fmt.Errorf("a link sweep needs the fabric's topology: give the coordinator one (coordinator.topology: a cabling plan, an ibnetdiscover file or a generated fat tree)")
	}
	var plan Plan
	byRail := map[int][]int{} // rail -> HCAs of members on it
	inTopo := map[string]bool{}
	for _, h := range t.HCAs {
		inTopo[h.Node] = true
	}
	names := make([]string, 0, len(members))
	for _, m := range members {
		names = append(names, m.Name)
		if !inTopo[m.Name] {
			plan.Unmatched = append(plan.Unmatched, fmt.Sprintf("%s: a worker the topology does not list", m.Name))
			continue
		}
		for _, r := range m.Rails {
			h, ok := t.HCA(m.Name, r)
			switch {
			case !ok:
				plan.Unmatched = append(plan.Unmatched, fmt.Sprintf("%s rail %d: the worker has it, the topology does not", m.Name, r))
			case t.LeafOf(h) < 0:
				plan.Unmatched = append(plan.Unmatched, fmt.Sprintf("%s: no cable to a leaf in the topology", t.HCAName(h)))
			default:
				byRail[r] = append(byRail[r], h)
			}
		}
	}
	workers := map[string]bool{}
	for _, n := range names {
		workers[n] = true
	}
	missing := map[string]bool{}
	for _, h := range t.HCAs {
		if !workers[h.Node] && !missing[h.Node] {
			missing[h.Node] = true
			plan.Unmatched = append(plan.Unmatched, fmt.Sprintf("%s: in the topology, not among the workers", h.Node))
		}
	}
	slices.Sort(plan.Unmatched)
	rails := make([]int, 0, len(byRail))
	for r := range byRail {
		rails = append(rails, r)
	}
	slices.Sort(rails)
	pairs := planRails(t, rails, byRail)
	for _, p := range pairs {
		plan.Planes = append(plan.Planes, p.cover())
	}
	merged := newPairSet()
	for _, p := range pairs {
		for i, pr := range p.pairs.list {
			for _, rf := range p.pairs.rails[i] {
				merged.add(pr.A, pr.B, rf)
			}
		}
	}
	plan.Pairs, plan.Steer = merged.list, merged.rails
	plan.Rounds = pack(t, plan.Pairs, plan.Steer, names)
	return plan, nil
}

// pairSet merges the tests of all rails into pairs of nodes, so that a
// pair steered on several rails runs them at once.
type pairSet struct {
	index map[[2]string]int
	list  []scheduler.Pair
	rails [][]scheduler.RailFlow
}

func newPairSet() *pairSet { return &pairSet{index: map[[2]string]int{}} }

func (s *pairSet) add(a, b string, rf scheduler.RailFlow) {
	key := [2]string{min(a, b), max(a, b)}
	i, ok := s.index[key]
	if !ok {
		i = len(s.list)
		s.index[key] = i
		s.list = append(s.list, scheduler.Pair{A: a, B: b})
		s.rails = append(s.rails, nil)
	}
	if s.list[i].A != a {
		rf.A, rf.B = rf.B, rf.A
	}
	rails := s.rails[i]
	if slices.ContainsFunc(rails, func(x scheduler.RailFlow) bool { return x.Rail == rf.Rail }) {
		return // the rail is taken in this pair: the caller checked it is not
	}
	rails = append(rails, rf)
	slices.SortFunc(rails, func(x, y scheduler.RailFlow) int { return cmp.Compare(x.Rail, y.Rail) })
	s.rails[i] = rails
}

func (s *pairSet) has(a, b string, rail int) bool {
	key := [2]string{min(a, b), max(a, b)}
	i, ok := s.index[key]
	return ok && slices.ContainsFunc(s.rails[i], func(x scheduler.RailFlow) bool { return x.Rail == rail })
}

// Sport is the UDP source port a flow label gives a RoCE v2 QP: the
// label alone decides it.
func Sport(label uint32) uint16 { return probe.RoCEv2Sport(label, 0, 0) }

// planRails plans each rail's plane. Planes that share no link (a
// rail-optimized fabric's) are planned at once, one a core; where they
// share switches a rail counts what the rails before it covered, so they
// go in order.
func planRails(t *topology.Topology, rails []int, byRail map[int][]int) []*plane {
	need := make([]int8, 2*len(t.Cables))
	first := make([]int64, 2*len(t.Cables))
	planes := make([]*plane, len(rails))
	owner := make([]int16, 2*len(t.Cables))
	shared := false
	for i, r := range rails {
		planes[i] = newPlane(t, r, byRail[r], need, first)
		planes[i].pairs = newPairSet()
		for _, l := range planes[i].links {
			shared = shared || owner[l] != 0
			owner[l] = int16(i + 1)
		}
	}
	if shared {
		for i, r := range rails {
			if i > 0 {
				// Again, now that the rails before it have covered what
				// they share with it.
				pairs := planes[i].pairs
				planes[i] = newPlane(t, r, byRail[r], need, first)
				planes[i].pairs = pairs
			}
			planes[i].plan(planes[i].pairs)
		}
		return planes
	}
	var wg sync.WaitGroup
	work := make(chan *plane)
	for range min(runtime.GOMAXPROCS(0), len(planes)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				p.plan(p.pairs)
			}
		}()
	}
	for _, p := range planes {
		work <- p
	}
	close(work)
	wg.Wait()
	return planes
}
