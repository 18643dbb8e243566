package web

import (
	"context"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// doneBackend serves m as "big", the only sweep, finished: what the
// preparer prepares at once.
func doneBackend(m *matrix.Matrix) *fakeBackend {
	f := synthBackend(m)
	f.sweeps = []api.SweepInfo{f.sweeps[1]}
	f.sweeps[0].State = api.SweepDone
	return f
}

func TestPrepareFinishedSweep(t *testing.T) {
	f := newFake() // s2 is running and newest; s1 is done
	s := New(f, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); s.Prepare(ctx, time.Millisecond) }()
	defer func() {
		cancel()
		<-stopped
	}()

	// The newest sweep runs: nothing is prepared, not even the older one,
	// which the page does not open by default.
	wait.For(t, "a few preparer passes", func() bool { return f.lists() >= 3 })
	if s.Prepared("s2") || s.Prepared("s1") {
		t.Fatal("prepared views while the newest sweep was still running")
	}

	// It finishes: its grid and status layer are cached without any request.
	f.update("s2", func(i *api.SweepInfo) { i.State = api.SweepDone })
	wait.For(t, "s2's first-paint views", func() bool { return s.Prepared("s2") })

	// A request for them is served from the cache: same ETag, no rebuild.
	m, _ := f.Matrix("s2")
	b, err := s.gridBlob(context.Background(), "s2", m)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := s.gridBlob(context.Background(), "s2", m)
	if b != b2 {
		t.Fatal("the prepared grid was built again")
	}

	// Then the p50 layer over all rails, what an operator switches to first;
	// a request gets the prepared answer.
	wait.For(t, "s2's p50 layer", func() bool { return s.PreparedValues("s2") })
	p, err := s.layerBlob(context.Background(), "s2", m, "p50", allRails)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := mustView(t, m).encodeLayer(context.Background(), "p50", allRails)
	if err != nil || string(fresh) != string(p.raw) {
		t.Fatalf("the prepared p50 layer differs from a fresh one (%v)", err)
	}

	// Unchanged, the finished sweep costs no further matrix call.
	asked, lists := f.matrixAsks(), f.lists()
	wait.For(t, "more preparer passes", func() bool { return f.lists() >= lists+3 })
	if n := f.matrixAsks(); n != asked {
		t.Fatalf("the preparer asked for an unchanged sweep's matrix %d more times", n-asked)
	}

	cancel()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Prepare did not return after its context ended")
	}
}

// A panic while preparing is logged, not fatal, and not retried in a loop.
func TestPrepareSurvivesPanic(t *testing.T) {
	f := newFake()
	f.update("s2", func(i *api.SweepInfo) { i.State = api.SweepDone })
	f.matrixPanic = true
	s := New(f, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); s.Prepare(ctx, time.Millisecond) }()
	wait.For(t, "the preparer to keep polling after the panic", func() bool { return f.lists() >= 5 })
	if n := f.matrixAsks(); n != 1 {
		t.Fatalf("the panicking sweep was tried %d times", n)
	}
	cancel()
	<-stopped
}

// Options.Prepare runs once for a newly finished sweep, after its
// first-paint views are cached and before the p50 layer is built: one
// walk over the cells at a time.
func TestPrepareRunsTheBackendsOwnBetween(t *testing.T) {
	f := newFake() // s2 is running and newest
	type call struct{ views, values bool }
	calls := make(chan call, 4)
	var s *Server
	s = New(f, Options{Prepare: func(ctx context.Context) {
		calls <- call{s.Prepared("s2"), s.PreparedValues("s2")}
	}})
	ctx, cancel := context.WithCancel(context.Background())
	startPrepare(t, ctx, s, cancel)
	f.update("s2", func(i *api.SweepInfo) { i.State = api.SweepDone })
	wait.For(t, "s2's p50 layer", func() bool { return s.PreparedValues("s2") })
	seen := f.lists()
	wait.For(t, "a few more preparer passes", func() bool { return f.lists() >= seen+5 })
	if len(calls) != 1 {
		t.Fatalf("the backend's preparation ran %d times for one finished sweep, want once", len(calls))
	}
	if c := <-calls; !c.views || c.values {
		t.Fatalf("it ran with the first-paint views prepared %v and the p50 layer %v: want after the one, before the other", c.views, c.values)
	}
}

// A panic in Options.Prepare is logged as its own and the p50 layer is
// still prepared.
func TestPrepareSurvivesTheBackendsPanic(t *testing.T) {
	f := newFake()
	f.update("s2", func(i *api.SweepInfo) { i.State = api.SweepDone })
	s := New(f, Options{Prepare: func(context.Context) { panic("the backend's bug") }})
	ctx, cancel := context.WithCancel(context.Background())
	startPrepare(t, ctx, s, cancel)
	wait.For(t, "the p50 layer after the backend's panic", func() bool { return s.PreparedValues("s2") })
}
