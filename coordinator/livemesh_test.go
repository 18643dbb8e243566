package coordinator

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/coordinator/live"
	"github.com/rdmamesh/rdmamesh/internal/liveplan"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// A leadership that ends and comes back must not continue from what this
// replica planned back then: another leader may have committed newer plan
// ids in between, and the judged matrix is stale.
func TestMeshRestartForgetsTheLastLeadership(t *testing.T) {
	var m mesh
	m.plan, m.key, m.body, m.pending = &liveplan.Plan{ID: 4}, "a|b", []byte{1}, "a|b|c"
	m.judged, m.judgedW, m.err = &matrix.Matrix{}, 9, "commit live plan 5: not the leader"
	m.restart(live.New(live.Options{}))
	if m.plan != nil || m.key != "" || m.body != nil || m.pending != "" || m.judged != nil || m.judgedW != 0 || m.err != "" {
		t.Fatalf("state survived a restart: plan %v key %q body %v pending %q judged %v/%d err %q",
			m.plan, m.key, m.body, m.pending, m.judged, m.judgedW, m.err)
	}
	if m.mx == nil || m.since == nil || m.heard == nil {
		t.Fatal("restart left no live matrix to fold into")
	}
}

// A step reports a problem while it lasts (and still collects and
// judges: no plan here, so nothing to fold).
func TestLiveStepReportsWhileTheProblemLasts(t *testing.T) {
	c := &Coordinator{log: slog.New(slog.DiscardHandler), reg: newRegistry()}
	c.mesh.restart(live.New(live.Options{}))
	c.liveStep(context.Background())
	if !strings.Contains(c.mesh.err, "at least 2 workers") {
		t.Fatalf("with no workers: %q", c.mesh.err)
	}
	c.setLiveErr("") // what liveStep does after a step without a problem
	if c.mesh.err != "" {
		t.Fatalf("a clean step left %q", c.mesh.err)
	}
}
