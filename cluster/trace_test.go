package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/coordinator"
	"github.com/rdmamesh/rdmamesh/internal/api"
)

// TraceCell asks the cell's initiator to trace the test's flow. The
// simulated workers' GIDs are no addresses of this host, so the real
// tracer in the worker refuses to send from them, and the coordinator
// passes the reason on instead of inventing a path; a cell the sweep
// lacks is refused before any worker is asked.
func TestTraceCellAsksTheInitiator(t *testing.T) {
	cl := startSweepDefaults(t, 4, coordinator.SweepDefaults{})
	info, m := sweepWith(t, cl, api.SweepRequest{Mode: "quick"})
	c := m.Cells[0]
	if c.Flow == 0 {
		t.Fatalf("cell %s -> %s has no flow", c.Src, c.Dst)
	}
	_, err := cl.Coord.TraceCell(context.Background(), info.ID, api.TraceRequest{Src: c.Src, Dst: c.Dst, Rail: c.Rail})
	var un interface{ Unavailable() bool }
	if !errors.As(err, &un) || !strings.Contains(err.Error(), "tracing from "+c.Src) {
		t.Fatalf("trace from a simulated worker: %v", err)
	}
	t.Logf("the worker's answer: %v", err)
	_, err = cl.Coord.TraceCell(context.Background(), info.ID, api.TraceRequest{Src: c.Src, Dst: "nobody", Rail: 0})
	var fe interface{ Field() string }
	if !errors.As(err, &fe) || fe.Field() != "src" || !strings.Contains(err.Error(), "has no cell") {
		t.Fatalf("a cell the sweep lacks: %v", err)
	}
}
