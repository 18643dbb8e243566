package sweep

import (
	"sync"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
)

// railPlan is scheduler.RailPlan remembered per (mode, rails): it is pure
// and asked once per direction, a million times in a 1,024-node sweep.
// Callers must not modify the plan.
func railPlan(mode scheduler.RailMode, rails int) ([][]scheduler.RailLink, error) {
	k := railPlanKey{mode, rails}
	if v, ok := railPlans.Load(k); ok {
		return v.([][]scheduler.RailLink), nil
	}
	plan, err := scheduler.RailPlan(mode, rails)
	if err == nil {
		railPlans.Store(k, plan)
	}
	return plan, err
}

type railPlanKey struct {
	mode  scheduler.RailMode
	rails int
}

var railPlans sync.Map // railPlanKey → [][]scheduler.RailLink
