package sweep

import (
	"reflect"
	"testing"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
)

// The cache hands out what scheduler.RailPlan gives, the same plan on
// every ask, and passes RailPlan's refusals on.
func TestRailPlanCache(t *testing.T) {
	for _, tc := range []struct {
		mode   scheduler.RailMode
		rails  int
		cached bool
	}{
		{"", 8, true}, {scheduler.RailsSame, 8, true}, {scheduler.RailsCross, 4, true}, {scheduler.RailsAll, 1, true},
		{scheduler.RailsSame, maxCachedRails + 1, false}, {"diagonal", 8, false}, {scheduler.RailsSame, 0, false},
	} {
		want, wantErr := scheduler.RailPlan(tc.mode, tc.rails)
		a, errA := railPlan(tc.mode, tc.rails)
		b, _ := railPlan(tc.mode, tc.rails)
		if (errA != nil) != (wantErr != nil) || !reflect.DeepEqual(a, want) {
			t.Errorf("%q/%d: %v %v, want %v %v", tc.mode, tc.rails, a, errA, want, wantErr)
		}
		if same := len(a) > 0 && &a[0] == &b[0]; same != tc.cached {
			t.Errorf("%q/%d: the same plan twice: %v, want %v", tc.mode, tc.rails, same, tc.cached)
		}
	}
}
