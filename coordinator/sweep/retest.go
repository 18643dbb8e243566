package sweep

import (
	"fmt"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// retestPerNode caps how many of one node's pairs a confirmation pass
// retests. A node whose every pair is bad is already well localised; its
// pairs in full would make the pass a star of n-1 sequential rounds, while
// a sample of them says whether the fault persists.
const retestPerNode = 4

// RetestPairs picks the pairs a confirmation pass retests: those with a
// cell the matrix wants confirmed, and from pass 2 on only cells that every
// earlier pass retested and still judged bad, so the set shrinks pass by
// pass. Pairs come in matrix order, so every leader picks the same ones.
//
// Failures that are systemic (most of a rail, or nearly every cell of a
// node) are not retested: they are no noise to rule out, and retesting a
// dead rail costs a retry timeout per test.
func RetestPairs(m *matrix.Matrix, pass int) []scheduler.Pair {
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
	// Verdicts come from the compact cells; only the few worth a retest
	// are read whole (for their retests so far).
	for k := range m.NumCells() {
		if v := m.VerdictAt(k); v == matrix.VerdictOK || v == matrix.VerdictUntested {
			continue
		}
		r := m.CellAt(k)
		consider(&r)
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
