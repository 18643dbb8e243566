package sweep

import (
	"fmt"
	"slices"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// Sweep patterns (Spec.Pattern).
const (
	PatternAllPairs = "all-pairs"
	PatternKBatch   = "k-batch"
	PatternOneToAll = "one-to-all"
)

// PlanRounds turns a spec into the sweep's main rounds. It must give the
// same rounds on every leader for the same spec and names, as rounds are
// identified by index when a new leader resumes.
func PlanRounds(spec Spec, names []string) ([]scheduler.Round, error) {
	switch spec.Pattern {
	case "", PatternAllPairs:
		return scheduler.AllPairs(names)
	case PatternKBatch:
		return scheduler.KBatch(names, spec.BatchSize)
	case PatternOneToAll:
		return scheduler.OneToAll(names, spec.Root)
	}
	return nil, fmt.Errorf("pattern %q: want %s, %s, %s, %s or %s", spec.Pattern, PatternAllPairs, PatternKBatch, PatternOneToAll, PatternLinks, PatternFabric)
}

// RailPhases lists what src → dst tests, one probe task per phase: the
// rails both nodes have (restricted to spec.Rails when given), linked as the
// rail mode says. Inside a phase each HCA appears once, so a phase's rails
// run in parallel without sharing an HCA.
func RailPhases(spec Spec, src, dst matrix.Node) [][]probe.RailPair {
	return railPhases(&phaseBuf{}, spec, newNodeRec(src), newNodeRec(dst))
}

// phaseBuf is the space one direction's rail phases are built in. A pool
// goroutine keeps one per direction and reuses it pair after pair (the
// phases live only until the pair's dispatch returns), so a round plans
// its pairs without allocating.
type phaseBuf struct {
	links  []probe.RailPair
	phases [][]probe.RailPair
}

func railPhases(pb *phaseBuf, spec Spec, src, dst *nodeRec) [][]probe.RailPair {
	common := min(len(src.eps), len(dst.eps))
	// Asked once per direction, a million times a 1,024-node sweep: the
	// rail list stays on the stack and the phases share one allocation.
	var buf [16]int
	rails := buf[:0]
	for r := 0; r < common; r++ {
		if len(spec.Rails) == 0 || slices.Contains(spec.Rails, r) {
			rails = append(rails, r)
		}
	}
	if len(rails) == 0 {
		return nil
	}
	plan, err := railPlan(scheduler.RailMode(spec.RailMode), len(rails))
	if err != nil {
		// The mode was validated when the sweep started; a spec from a newer
		// coordinator falls back to what every version can do.
		plan, _ = railPlan(scheduler.RailsSame, len(rails))
	}
	links := 0
	for _, phase := range plan {
		links += len(phase)
	}
	all, out := pb.links[:0], pb.phases[:0]
	if cap(all) < links {
		all = make([]probe.RailPair, 0, links)
	}
	for _, phase := range plan {
		start := len(all)
		for _, l := range phase {
			a, b := rails[l.A], rails[l.B]
			all = append(all, probe.RailPair{Rail: a, Src: src.eps[a], Dst: dst.eps[b]})
		}
		// Capped, so that no caller's append to one phase runs into the next.
		out = append(out, all[start:len(all):len(all)])
	}
	pb.links, pb.phases = all, out
	return out
}

// CountCells is how many directional cells the sweep's main rounds record.
func CountCells(spec Spec, nodes []matrix.Node, rounds []scheduler.Round) int {
	byName := make(map[string]matrix.Node, len(nodes))
	for _, n := range nodes {
		byName[n.Name] = n
	}
	// A direction's links depend only on how many rails its ends share:
	// remembered, so a 1,024-node sweep does not plan a million directions'
	// rail phases before it starts.
	links := map[int]int{}
	cells := 0
	for _, rd := range rounds {
		for i, p := range rd.Pairs {
			if i < len(rd.Steer) && len(rd.Steer[i]) > 0 {
				cells += 2 * len(rd.Steer[i])
				continue
			}
			for _, dir := range [2][2]string{{p.A, p.B}, {p.B, p.A}} {
				src, dst := byName[dir[0]], byName[dir[1]]
				common := min(len(src.Ports), len(dst.Ports))
				n, ok := links[common]
				if !ok {
					for _, ph := range RailPhases(spec, src, dst) {
						n += len(ph)
					}
					links[common] = n
				}
				cells += n
			}
		}
	}
	return cells
}

// CellFor builds the cell of one rail pair; cross-rail pairs carry their
// destination rail.
func CellFor(src, dst string, round int, rp probe.RailPair) matrix.Cell {
	c := matrix.Cell{Src: src, Dst: dst, Rail: rp.Rail, SrcDevice: rp.Src.Device, DstDevice: rp.Dst.Device, Round: round}
	if rp.Dst.Rail != rp.Rail {
		dr := rp.Dst.Rail
		c.DstRail = &dr
	}
	return c
}

// FailCells gives every rail of a direction the same failure.
func FailCells(src, dst string, round int, rails []probe.RailPair, e *probe.Error) []matrix.Cell {
	out := make([]matrix.Cell, len(rails))
	for i, rp := range rails {
		out[i] = CellFor(src, dst, round, rp)
		out[i].Class, out[i].Error = e.Class, e
	}
	return out
}
