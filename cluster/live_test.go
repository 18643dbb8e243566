package cluster

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator"
	"github.com/rdmamesh/rdmamesh/internal/liveplan"
	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
)

// The always-on mesh end to end on the simulated fabric: workers probe as
// the leader's plan says, the leader collects and judges, and a fault
// injected at run time shows as a live suspect with no sweep started;
// healing clears it.
func TestLiveMeshFindsAnInjectedFault(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for several probe windows")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := Start(ctx, Options{Nodes: 8, Rails: 2, Seed: 3, Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Live: coordinator.LiveOptions{Enabled: true, Params: liveplan.Params{Window: time.Second, RatePerHCA: 100,
			GroupRate: 10, ProbesPerWindow: 20}}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()

	wait.Within(t, 60*time.Second, "a healthy live window judging every pair", func() bool {
		info := cl.Coord.LiveInfo()
		return info.Enabled && info.Healthy && info.Cells == 8*7*2 && info.Probing == 8
	})
	if err := cl.Inject([]string{"node-05/mlx5_1:loss=30%"}); err != nil {
		t.Fatal(err)
	}
	wait.Within(t, 60*time.Second, "the injected HCA as the first live suspect", func() bool {
		m, info, ok := cl.Coord.LiveMatrix()
		if !ok || info.Healthy || len(m.Suspects) == 0 {
			return false
		}
		s := m.Suspects[0]
		return s.Kind == "hca" && s.Node == "node-05" && s.Device == "mlx5_1"
	})
	if infos := cl.Coord.Sweeps(); len(infos) != 0 {
		t.Errorf("a sweep ran: %+v", infos)
	}
	if err := cl.Inject(nil); err != nil {
		t.Fatal(err)
	}
	wait.Within(t, 60*time.Second, "healthy again after healing", func() bool {
		info := cl.Coord.LiveInfo()
		return info.Healthy && info.Cells == 8*7*2
	})
}
