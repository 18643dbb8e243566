package coordinator

import (
	"fmt"
	"slices"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// Sweep patterns (sweepSpec.Pattern).
const (
	patternAllPairs = "all-pairs"
	patternKBatch   = "k-batch"
	patternOneToAll = "one-to-all"
)

// planRounds turns a spec into the sweep's main rounds. It must give the
// same rounds on every leader for the same spec and names, as rounds are
// identified by index when a new leader resumes.
func planRounds(spec sweepSpec, names []string) ([]scheduler.Round, error) {
	switch spec.Pattern {
	case "", patternAllPairs:
		return scheduler.AllPairs(names)
	case patternKBatch:
		return scheduler.KBatch(names, spec.BatchSize)
	case patternOneToAll:
		return scheduler.OneToAll(names, spec.Root)
	}
	return nil, fmt.Errorf("pattern %q: want %s, %s or %s", spec.Pattern, patternAllPairs, patternKBatch, patternOneToAll)
}

// railPhases lists what src → dst tests, one probe task per phase: the
// rails both nodes have (restricted to spec.Rails when given), linked as the
// rail mode says. Inside a phase each HCA appears once, so a phase's rails
// run in parallel without sharing an HCA.
func railPhases(spec sweepSpec, src, dst matrix.Node) [][]probe.RailPair {
	common := min(len(src.Ports), len(dst.Ports))
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
		plan, _ = scheduler.RailPlan(scheduler.RailsSame, len(rails))
	}
	links := 0
	for _, phase := range plan {
		links += len(phase)
	}
	all := make([]probe.RailPair, 0, links)
	out := make([][]probe.RailPair, 0, len(plan))
	for _, phase := range plan {
		start := len(all)
		for _, l := range phase {
			a, b := rails[l.A], rails[l.B]
			s, d := &src.Ports[a], &dst.Ports[b]
			all = append(all, probe.RailPair{Rail: a,
				Src: probe.Endpoint{Device: s.Device, Port: s.Port, GIDIndex: s.GIDIndex, Rail: a},
				Dst: probe.Endpoint{Device: d.Device, Port: d.Port, GIDIndex: d.GIDIndex, Rail: b}})
		}
		// Capped, so that no caller's append to one phase runs into the next.
		out = append(out, all[start:len(all):len(all)])
	}
	return out
}

// countCells is how many directional cells the sweep's main rounds record.
func countCells(spec sweepSpec, nodes []matrix.Node, rounds []scheduler.Round) int {
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
		for _, p := range rd.Pairs {
			for _, dir := range [2][2]string{{p.A, p.B}, {p.B, p.A}} {
				src, dst := byName[dir[0]], byName[dir[1]]
				common := min(len(src.Ports), len(dst.Ports))
				n, ok := links[common]
				if !ok {
					for _, ph := range railPhases(spec, src, dst) {
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

// cellFor builds the cell of one rail pair; cross-rail pairs carry their
// destination rail.
func cellFor(src, dst string, round int, rp probe.RailPair) matrix.Cell {
	c := matrix.Cell{Src: src, Dst: dst, Rail: rp.Rail, SrcDevice: rp.Src.Device, DstDevice: rp.Dst.Device, Round: round}
	if rp.Dst.Rail != rp.Rail {
		dr := rp.Dst.Rail
		c.DstRail = &dr
	}
	return c
}

// retestPerNode caps how many of one node's pairs a confirmation pass
// retests. A node whose every pair is bad is already well localised; its
// pairs in full would make the pass a star of n-1 sequential rounds, while
// a sample of them says whether the fault persists.
const retestPerNode = 4

// retestPairs picks the pairs a confirmation pass retests: those with a
// cell the matrix wants confirmed, and from pass 2 on only cells that every
// earlier pass retested and still judged bad, so the set shrinks pass by
// pass. Pairs come in matrix order, so every leader picks the same ones.
//
// Failures that are systemic (most of a rail, or nearly every cell of a
// node) are not retested: they are no noise to rule out, and retesting a
// dead rail costs a retry timeout per test.
func retestPairs(m *matrix.Matrix, pass int) []scheduler.Pair {
	seen := map[scheduler.Pair]bool{}
	perNode := map[string]int{}
	systemic := systemicFailures(m)
	var out []scheduler.Pair
	consider := func(r *matrix.Result) {
		if !matrix.RetestWorthy(r) || len(r.Retests) != pass-1 {
			return
		}
		if r.Verdict == matrix.VerdictFailed && (systemic[r.Src] || systemic[r.Dst] || systemic[railKey(r.Rail)]) {
			return
		}
		a, b := r.Src, r.Dst
		if b < a {
			a, b = b, a
		}
		p := scheduler.Pair{A: a, B: b}
		if seen[p] || perNode[a] >= retestPerNode || perNode[b] >= retestPerNode {
			return
		}
		seen[p] = true
		perNode[a]++
		perNode[b]++
		out = append(out, p)
	}
	for i := range m.Cells {
		consider(&m.Cells[i])
	}
	for i := range m.Cross {
		consider(&m.Cross[i])
	}
	return out
}

// systemicFailures names the nodes with at least 90% of their cells failed
// and the rails (railKey) with more than half failed.
func systemicFailures(m *matrix.Matrix) map[string]bool {
	out := map[string]bool{}
	for _, r := range m.NodeRollups {
		if r.Cells > 0 && r.Failed*10 >= r.Cells*9 {
			out[r.Key] = true
		}
	}
	for i, r := range m.RailRollups {
		if r.Cells > 0 && r.Failed*2 > r.Cells {
			out[railKey(i)] = true
		}
	}
	return out
}

// railKey cannot collide with a node name: gossip names never contain a
// space.
func railKey(rail int) string { return fmt.Sprintf("rail %d", rail) }
