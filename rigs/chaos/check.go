package chaos

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

type cellKey struct {
	src, dst string
	rail     int
}

// tally is what a finished sweep's matrix says about its cells.
type tally struct {
	expected int            // the cells the sweep planned (SweepInfo.Cells)
	unique   int            // distinct (src, dst, rail) measured
	lost     int            // planned but not in the matrix, or untested
	dup      int            // a (src, dst, rail) present twice, or counted past the plan
	classes  map[string]int // by failure class, "ok" included
}

// count checks the matrix has exactly one measured cell per (src, dst,
// rail): the matrix lists every pair and rail, so a cell that was never
// recorded shows up as untested, and one recorded twice as a repeat.
func count(info api.SweepInfo, m matrixView) tally {
	t := tally{expected: info.Cells, classes: map[string]int{}}
	seen := map[cellKey]bool{}
	for _, c := range m.Cells {
		k := cellKey{c.Src, c.Dst, c.Rail}
		if seen[k] {
			t.dup++
			continue
		}
		seen[k] = true
		if c.Verdict == "untested" || c.Class == "" {
			continue
		}
		t.unique++
		t.classes[c.Class]++
	}
	t.lost = max(0, t.expected-t.unique)
	// CellsDone is the FSM's own count; past the plan means it counted a
	// cell twice even if the matrix hides it.
	t.dup += max(0, info.CellsDone-info.Cells)
	return t
}

func (t tally) String() string {
	var parts []string
	for k, v := range t.classes {
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d/%d cells (%s), lost %d, duplicated %d", t.unique, t.expected, strings.Join(parts, ", "), t.lost, t.dup)
}

// involves reports whether a cell touches node.
func (c matrixCell) involves(node string) bool { return c.Src == node || c.Dst == node }
