package cluster

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// TestLocalizationScenarios is the localization scenario table on the whole stack:
// 16 simulated nodes in two switch groups (label group=leaf-01, leaf-02),
// one fault class each, and the suspect that must come first. The sim is
// deterministic for the seed, and confirmation passes are on, as shipped.
func TestLocalizationScenarios(t *testing.T) {
	tail := matrix.DefaultThresholds()
	tail.RobustZ = 6
	profiles := map[string]matrix.Thresholds{"tail": tail}
	cases := []struct {
		name    string
		faults  []string
		profile string
		kind    string // of the first suspect
		node    string
		rail    int
		group   string
		verdict matrix.Verdict
	}{
		{name: "hca down", faults: []string{"node-03/mlx5_1:down"}, kind: "hca", node: "node-03", rail: 1, verdict: matrix.VerdictFailed},
		{name: "node dead", faults: []string{"node-04:dead"}, kind: "node", node: "node-04", rail: matrix.AllRails, verdict: matrix.VerdictFailed},
		// 30% loss shows three ways: tests that lose the retry lottery fail
		// (the dominant verdict), the rest have retransmission tails and
		// starved bandwidth.
		{name: "flaky link", faults: []string{"node-02/mlx5_0:loss=30%"}, kind: "hca", node: "node-02", rail: 0, verdict: matrix.VerdictFailed},
		{name: "degraded bandwidth", faults: []string{"node-05:bw=0.4"}, kind: "node", node: "node-05", rail: matrix.AllRails, verdict: matrix.VerdictLowBandwidth},
		{name: "high tail latency", faults: []string{"node-06:tail=20x"}, kind: "node", node: "node-06", rail: matrix.AllRails, verdict: matrix.VerdictSlowLatency},
		{name: "milder tail, robust-z profile", faults: []string{"node-06:tail=4x"}, profile: "tail", kind: "node", node: "node-06", rail: matrix.AllRails, verdict: matrix.VerdictSlowLatency},
		// A rail-wide slowdown is invisible to population rules (every cell of
		// the rail is its own reference); a rail that drops everything is not.
		{name: "rail-wide problem", faults: []string{"node-01~node-16/mlx5_1:loss=100%"}, kind: "rail", rail: 1, verdict: matrix.VerdictFailed},
		{name: "switch group down", faults: []string{"node-09~node-16:loss=100%"}, kind: "switch-group", group: "group=leaf-02", rail: matrix.AllRails, verdict: matrix.VerdictFailed},
		// The dead HCA first (its writes fail), the slow node after it.
		{name: "two overlapping faults", faults: []string{"node-07/mlx5_0:down", "node-12:lat=5x"}, kind: "hca", node: "node-07", rail: 0, verdict: matrix.VerdictFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cl := startSweepDefaults(t, 16, coordinator.SweepDefaults{Retests: 2, Profiles: profiles}, tc.faults...)
			info, m := sweepWith(t, cl, api.SweepRequest{Mode: "full", Profile: tc.profile})
			if info.State != api.SweepDone || m.Healthy || len(m.Suspects) == 0 {
				t.Fatalf("sweep %s healthy=%v:\n%s", info.State, m.Healthy, m.Summary())
			}
			s := m.Suspects[0]
			if s.Kind != tc.kind || s.Node != tc.node || s.Rail != tc.rail || s.Group != tc.group || s.Verdict != tc.verdict {
				t.Fatalf("first suspect %s %s rail %d %s %s; want %s %s rail %d %s %s\n%s", s.Kind, s.Node, s.Rail, s.Group, s.Verdict,
					tc.kind, tc.node, tc.rail, tc.group, tc.verdict, m.Summary())
			}
			if s.Reason == "" || (s.Verdict == matrix.VerdictFailed && s.Fix == "") {
				t.Fatalf("suspect without reason or fix: %+v", s)
			}
			if tc.name == "two overlapping faults" && !hasSuspect(m, "node", "node-12") {
				t.Fatalf("the slow node beside the dead HCA is not named:\n%s", m.Summary())
			}
		})
	}
}

func hasSuspect(m *matrix.Matrix, kind, node string) bool {
	for _, s := range m.Suspects {
		if s.Kind == kind && s.Node == node {
			return true
		}
	}
	return false
}

func startSweepDefaults(t *testing.T, nodes int, d coordinator.SweepDefaults, faults ...string) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := probe.DefaultTestParams()
	p.LatencyIters = 200
	cl, err := Start(ctx, Options{Nodes: nodes, Rails: 2, Preset: "roce-2x100", Seed: 7, Faults: faults,
		Listen: "127.0.0.1:0", Mode: "full", Params: p, PairTimeout: 5 * time.Second, Sweep: d,
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	return cl
}

// TestBaselineCatchesRailWideSlowdown: a whole rail 4x slower passes every
// population rule, as each cell is compared with its own rail. A baseline
// from a good sweep of the same fabric (coordinator.baseline_file) flags it.
func TestBaselineCatchesRailWideSlowdown(t *testing.T) {
	good := startSweepDefaults(t, 8, coordinator.SweepDefaults{})
	_, m0 := sweepWith(t, good, api.SweepRequest{Mode: "quick"})
	if !m0.Healthy {
		t.Fatalf("reference sweep:\n%s", m0.Summary())
	}
	base := matrix.BaselineFrom(m0, "good.json")
	good.Stop()

	slow := startSweepDefaults(t, 8, coordinator.SweepDefaults{Baseline: base}, "node-01~node-08/mlx5_1:lat=4x")
	_, m := sweepWith(t, slow, api.SweepRequest{Mode: "quick"})
	if m.Healthy || len(m.Suspects) == 0 || m.Suspects[0].Kind != "rail" || m.Suspects[0].Rail != 1 {
		t.Fatalf("want rail 1 blamed against the baseline:\n%s", m.Summary())
	}
	for _, c := range m.Cells {
		if c.Rail == 1 && (c.Verdict != matrix.VerdictSlowLatency || !strings.Contains(c.Reason, `over baseline "good.json"`)) {
			t.Fatalf("%s→%s rail 1: %s %q", c.Src, c.Dst, c.Verdict, c.Reason)
		}
		if c.Rail == 0 && c.Verdict != matrix.VerdictOK {
			t.Fatalf("%s→%s rail 0 is %s: %s", c.Src, c.Dst, c.Verdict, c.Reason)
		}
	}
}
