package web

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/web/internal/synth"
)

// stopMatrix is big enough for the parallel walk (64 Ki cells and up) and
// for dozens of test-sized chunks a walk.
func stopMatrix(t *testing.T) *matrix.Matrix {
	t.Helper()
	m := synth.Matrix(130, 4)
	if m.NumCells() < 1<<16 {
		t.Fatalf("%d cells: too few for the parallel walk", m.NumCells())
	}
	return m
}

// countWalks counts the cells walked over m from now to the end of the
// test, in chunks of 1,024, and calls at once, with the walk's ctx, when the
// count reaches after.
func countWalks(t *testing.T, m *matrix.Matrix, after int, at func(walk context.Context)) *atomic.Int64 {
	t.Helper()
	var walked atomic.Int64
	var once sync.Once
	chunk := walkChunk
	walkChunk = 1024
	walkedHook = func(ctx context.Context, wm *matrix.Matrix, cells int) {
		if wm == m && walked.Add(int64(cells)) >= int64(after) {
			once.Do(func() { at(ctx) })
		}
	}
	t.Cleanup(func() { walkChunk, walkedHook = chunk, nil })
	return &walked
}

// startPrepare runs s.Prepare under ctx until cancel or the end of the
// test; the channel closes when it has returned.
func startPrepare(t *testing.T, ctx context.Context, s *Server, cancel context.CancelFunc) <-chan struct{} {
	t.Helper()
	stopped := make(chan struct{})
	go func() { defer close(stopped); s.Prepare(ctx, time.Millisecond) }()
	t.Cleanup(func() {
		cancel()
		<-stopped
	})
	return stopped
}

func closed(ch <-chan struct{}) func() bool {
	return func() bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
}

// Prepare's three walks over a sweep (the grid's tally, the p50 scale, the
// p50 codes) each stop within a chunk per worker of a cancel, Prepare
// returns, and nothing half-built is kept: the next requests build the
// same answers a fresh view does.
func TestPrepareStopsMidWalk(t *testing.T) {
	m := stopMatrix(t)
	n := m.NumCells()
	for _, tc := range []struct {
		walk   string
		cancel int // cells walked
	}{
		{"grid tally", n / 2},
		{"p50 scale", n + n/2},
		{"p50 codes", 2*n + n/2},
	} {
		t.Run(tc.walk, func(t *testing.T) {
			f := doneBackend(m)
			s := New(f, Options{})
			ctx, cancel := context.WithCancel(context.Background())
			walked := countWalks(t, m, tc.cancel, func(context.Context) { cancel() })
			stopped := startPrepare(t, ctx, s, cancel)
			wait.For(t, "Prepare to return after the cancel", closed(stopped))
			bound := tc.cancel + runtime.GOMAXPROCS(0)*walkChunk
			if w := int(walked.Load()); w < tc.cancel || w > bound {
				t.Fatalf("walked %d cells, cancelled at %d: want at most %d", w, tc.cancel, bound)
			}
			wantNoP50(t, s, m)
			if tc.walk == "grid tally" && s.views.lookup(m).v.Load() != nil {
				t.Fatal("a view whose tally was cancelled is cached")
			}
			wantFresh(t, s, m)
		})
	}
}

// wantNoP50 fails if any part of the p50 layer of m is cached.
func wantNoP50(t *testing.T, s *Server, m *matrix.Matrix) {
	t.Helper()
	e := s.views.lookup(m)
	if e == nil {
		return
	}
	e.mu.Lock()
	_, ok := e.blobs[layerKey("p50", allRails)]
	e.mu.Unlock()
	if ok {
		t.Fatal("the p50 layer is cached")
	}
	if v := e.v.Load(); v != nil {
		v.mu.Lock()
		_, ok := v.codes["p50"]
		v.mu.Unlock()
		if ok {
			t.Fatal("the p50 codes are cached")
		}
	}
}

// wantFresh asks s for m's grid and layers and compares them with a fresh
// view's.
func wantFresh(t *testing.T, s *Server, m *matrix.Matrix) {
	t.Helper()
	v := mustView(t, m)
	grid, err := json.Marshal(v.grid("big"))
	if err != nil {
		t.Fatal(err)
	}
	if got := do(t, s.Handler(), "GET", "/api/v1/sweeps/big/grid", ""); got.Code != 200 || got.Body.String() != string(grid) {
		t.Fatalf("grid: status %d, differs from a fresh one: %t", got.Code, got.Body.String() != string(grid))
	}
	for _, metric := range []string{"status", "p50"} {
		want, err := v.encodeLayer(context.Background(), metric, allRails)
		if err != nil {
			t.Fatal(err)
		}
		got := do(t, s.Handler(), "GET", "/api/v1/sweeps/big/layer?metric="+metric, "")
		if got.Code != 200 || got.Body.String() != string(want) {
			t.Fatalf("%s layer: status %d, differs from a fresh one: %t", metric, got.Code, got.Body.String() != string(want))
		}
	}
}

// A newer sweep finishing while an older one's p50 codes are walked stops
// that walk; the newer sweep is prepared instead.
func TestPrepareStopsForNewerSweep(t *testing.T) {
	m := stopMatrix(t)
	n := m.NumCells()
	f := doneBackend(m)
	walked := countWalks(t, m, 2*n+n/4, func(walk context.Context) {
		f.mu.Lock()
		newer := f.sweeps[0]
		newer.ID = "newer"
		f.sweeps = append([]api.SweepInfo{newer}, f.sweeps...)
		f.matrices["newer"] = synth.Matrix(24, 2)
		f.mu.Unlock()
		// Hold this worker until the preparer sees the newer sweep and
		// cancels the walk, so the rest of it cannot finish first; bounded
		// so a preparer that never cancels fails the test, not hangs it.
		select {
		case <-walk.Done():
		case <-time.After(10 * time.Second):
		}
	})
	s := New(f, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	startPrepare(t, ctx, s, cancel)
	wait.For(t, "the newer sweep's first-paint views", func() bool { return s.Prepared("newer") })
	wait.For(t, "the newer sweep's p50 layer", func() bool { return s.PreparedValues("newer") })
	if w := int(walked.Load()); w >= 3*n {
		t.Fatalf("the older sweep's walks went on to the end (%d cells)", w)
	}
	wantNoP50(t, s, m)
}

// A browser that goes away while its layer is built stops the walk: 499,
// nothing cached, and the next browser gets the layer in full.
func TestLayerRequestStopsWhenClientLeaves(t *testing.T) {
	m := stopMatrix(t)
	n := m.NumCells()
	s := New(doneBackend(m), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	walked := countWalks(t, m, n+n/2, func(context.Context) { cancel() }) // the view, then half the scale
	req := httptest.NewRequestWithContext(ctx, "GET", "/api/v1/sweeps/big/layer?metric=p50", nil)
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != statusClientClosed {
		t.Fatalf("status %d, want %d", rec.Code, statusClientClosed)
	}
	if w, bound := int(walked.Load()), n+n/2+runtime.GOMAXPROCS(0)*walkChunk; w > bound {
		t.Fatalf("walked %d cells, want at most %d", w, bound)
	}
	wantNoP50(t, s, m)
	wantFresh(t, s, m)
}

// While the preparer walks for the p50 layer, the first paint's answers it
// cached before are served at once, and a status layer it did not prepare
// (one rail's: the page opens on all rails) is built without waiting: a
// build holds up only its own key and its own metric's codes.
func TestCachedAnswersDoNotWaitForABuild(t *testing.T) {
	m := stopMatrix(t)
	n := m.NumCells()
	held, release := make(chan struct{}), make(chan struct{})
	countWalks(t, m, 2*n+n/4, func(walk context.Context) { // mid-way through the p50 codes
		close(held)
		select {
		case <-release:
		case <-walk.Done():
		}
	})
	s := New(doneBackend(m), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	startPrepare(t, ctx, s, cancel)
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the preparer did not reach the p50 codes")
	}
	defer close(release)
	for _, path := range []string{"/api/v1/sweeps/big/grid", "/api/v1/sweeps/big/layer?metric=status", "/api/v1/sweeps/big/layer?metric=status&rail=1"} {
		code := make(chan int, 1)
		go func() { code <- do(t, s.Handler(), "GET", path, "").Code }()
		select {
		case c := <-code:
			if c != 200 {
				t.Fatalf("%s: status %d", path, c)
			}
		case <-time.After(5 * time.Second):
			release <- struct{}{} // let the walk and with it the request end
			<-code
			t.Fatalf("%s waited for the p50 layer's build", path)
		}
	}
}
