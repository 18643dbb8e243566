package cluster

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator"
	"github.com/rdmamesh/rdmamesh/internal/liveplan"
)

func TestShareLive(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		nodes, rails     int
		in               liveplan.Params
		wantRate, wantGR float64
		wantPeriod       time.Duration
	}{
		{32, 4, liveplan.Params{}, 50, 1, 0},                                                  // 6,400/s: within the budget
		{32, 4, liveplan.Params{Period: time.Minute}, 50, 1, time.Minute},                     // untouched, bound kept
		{512, 2, liveplan.Params{Period: 10 * time.Minute}, 8000.0 / 1024, 8000.0 / 51200, 0}, // 51,200/s scaled to 8,000
		{1000, 8, liveplan.Params{RatePerHCA: 10, GroupRate: 0.5}, 1, 0.05, 0},
	} {
		got := shareLive(coordinator.LiveOptions{Enabled: true, Params: tc.in}, tc.nodes, tc.rails, quiet).Params.WithDefaults()
		if !near(got.RatePerHCA, tc.wantRate) || !near(got.GroupRate, tc.wantGR) || got.Period != tc.wantPeriod {
			t.Errorf("%d x %d %+v: got rate %v group %v period %v, want %v %v %v", tc.nodes, tc.rails, tc.in,
				got.RatePerHCA, got.GroupRate, got.Period, tc.wantRate, tc.wantGR, tc.wantPeriod)
		}
		if total := float64(tc.nodes*tc.rails) * got.RatePerHCA; total > sharedProbeBudget*1.000001 {
			t.Errorf("%d x %d: %v probes/s in one process", tc.nodes, tc.rails, total)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
