package sweep

import (
	"cmp"
	"slices"

	"github.com/rdmamesh/rdmamesh/coordinator/linkplan"
	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/topology"
)

// Link sweep patterns: every switch link crossed both ways by steered
// tests (links), and that plus every pair inside each leaf group (fabric),
// the validation to run before a job.
const (
	PatternLinks  = "links"
	PatternFabric = "fabric"
)

// Steered reports whether the spec's pattern steers its tests over the
// fabric's links (links, fabric): planned on a topology, judged by
// matrix.Thresholds.SteeredLinks.
func (s Spec) Steered() bool { return s.Pattern == PatternLinks || s.Pattern == PatternFabric }

// Planned is a sweep's main rounds and, for the link patterns, the plan
// they came from.
type Planned struct {
	Rounds []scheduler.Round
	Links  *linkplan.Plan
}

// PlanSweep plans spec's main rounds over nodes. The link patterns plan on
// topo (nil: refused, saying what to give); the others need only names.
// Like PlanRounds it must give the same rounds on every leader.
func PlanSweep(spec Spec, nodes []matrix.Node, topo *topology.Topology) (Planned, error) {
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	if !spec.Steered() {
		rounds, err := PlanRounds(spec, names)
		return Planned{Rounds: rounds}, err
	}
	members := make([]linkplan.Member, len(nodes))
	for i, n := range nodes {
		members[i].Name = n.Name
		for r := range n.Ports {
			if len(spec.Rails) == 0 || slices.Contains(spec.Rails, r) {
				members[i].Rails = append(members[i].Rails, r)
			}
		}
	}
	lp, err := linkplan.Links(topo, members)
	if err != nil {
		return Planned{}, err
	}
	var rounds []scheduler.Round
	if spec.Pattern == PatternFabric {
		if rounds, err = leafRounds(topo, members); err != nil {
			return Planned{}, err
		}
	}
	for _, rd := range lp.Rounds {
		r := scheduler.Round{Index: len(rounds)}
		for _, i := range rd {
			r.Pairs = append(r.Pairs, lp.Pairs[i])
			r.Steer = append(r.Steer, lp.Steer[i])
		}
		rounds = append(rounds, r)
	}
	return Planned{Rounds: rounds, Links: &lp}, nil
}

// leafRounds tests every pair of nodes inside each leaf group (the nodes
// whose first rail hangs off one leaf: in a rail-optimized fabric every
// rail of theirs shares a leaf too), all groups at once, round k of each
// group in round k.
func leafRounds(topo *topology.Topology, members []linkplan.Member) ([]scheduler.Round, error) {
	groups := map[int][]string{}
	for _, m := range members {
		if len(m.Rails) == 0 {
			continue
		}
		h, ok := topo.HCA(m.Name, m.Rails[0])
		if !ok || topo.LeafOf(h) < 0 {
			continue // reported by the link plan as unmatched
		}
		leaf := topo.LeafOf(h)
		groups[leaf] = append(groups[leaf], m.Name)
	}
	leaves := make([]int, 0, len(groups))
	for l := range groups {
		leaves = append(leaves, l)
	}
	slices.SortFunc(leaves, cmp.Compare)
	var rounds []scheduler.Round
	for _, l := range leaves {
		rs, err := scheduler.AllPairs(groups[l])
		if err != nil {
			return nil, err
		}
		for k, rd := range rs {
			if k == len(rounds) {
				rounds = append(rounds, scheduler.Round{Index: k})
			}
			rounds[k].Pairs = append(rounds[k].Pairs, rd.Pairs...)
		}
	}
	return rounds, nil
}

// steering maps each steered pair (by its names, in either order) to its
// rails, so a confirmation pass retests a pair on the paths it was
// steered onto.
type steering map[[2]string]steered

type steered struct {
	a     string
	rails []scheduler.RailFlow
}

func newSteering(p Planned) steering {
	if p.Links == nil {
		return nil
	}
	s := steering{}
	for i, pr := range p.Links.Pairs {
		s[[2]string{min(pr.A, pr.B), max(pr.A, pr.B)}] = steered{a: pr.A, rails: p.Links.Steer[i]}
	}
	return s
}

// steer sets rd.Steer from s for the pairs s has.
func (s steering) steer(rd *scheduler.Round) {
	if s == nil {
		return
	}
	rd.Steer = make([][]scheduler.RailFlow, len(rd.Pairs))
	for i, p := range rd.Pairs {
		st, ok := s[[2]string{min(p.A, p.B), max(p.A, p.B)}]
		if !ok {
			continue
		}
		rails := st.rails
		if st.a != p.A {
			rails = make([]scheduler.RailFlow, len(st.rails))
			for j, rf := range st.rails {
				rails[j] = scheduler.RailFlow{Rail: rf.Rail, A: rf.B, B: rf.A}
			}
		}
		rd.Steer[i] = rails
	}
}
