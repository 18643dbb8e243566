package sweep

import (
	"sync/atomic"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
)

// railPlan is scheduler.RailPlan remembered per (mode, rails): it is pure
// and asked once per direction, a million times in a 1,024-node sweep.
// Callers must not modify the plan. The cache is a fixed table read with
// one atomic load: a sync.Map keyed by (mode, rails) cost an interface
// hash and a trie walk a lookup, 0.3 of 33 CPU-s in a 1,024-node profile.
func railPlan(mode scheduler.RailMode, rails int) ([][]scheduler.RailLink, error) {
	m, ok := modeSlot(mode)
	if !ok || rails < 1 || rails > maxCachedRails {
		return scheduler.RailPlan(mode, rails) // its error names the bad value
	}
	slot := &railPlans[m][rails]
	if p := slot.Load(); p != nil {
		return *p, nil
	}
	plan, err := scheduler.RailPlan(mode, rails)
	if err == nil {
		slot.Store(&plan)
	}
	return plan, err
}

// maxCachedRails is past any HCA count a node has; more are planned afresh.
const maxCachedRails = 64

var railPlans [3][maxCachedRails + 1]atomic.Pointer[[][]scheduler.RailLink]

// modeSlot is mode's row of railPlans; false for a mode RailPlan refuses.
func modeSlot(mode scheduler.RailMode) (int, bool) {
	switch mode {
	case scheduler.RailsSame, "":
		return 0, true
	case scheduler.RailsCross:
		return 1, true
	case scheduler.RailsAll:
		return 2, true
	}
	return 0, false
}
