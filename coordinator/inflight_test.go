package coordinator

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// A worker that gossip calls dead but that answers its API keeps its
// tests; one that does not answer loses them as peer-lost.
func TestConfirmDead(t *testing.T) {
	c := &Coordinator{inflight: newInflight(), client: &http.Client{}, log: slog.New(slog.DiscardHandler)}
	var asked string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = r.URL.Path
		if _, err := w.Write([]byte(`{"node":"vm1"}`)); err != nil {
			t.Errorf("answering the coordinator: %v", err)
		}
	}))
	api := strings.TrimPrefix(srv.URL, "http://")

	ctx, release := c.inflight.track(context.Background(), 0, "vm1", "vm2")
	defer release.done()
	c.confirmDead(context.Background(), "vm1", api)
	if ctx.Err() != nil || asked != "/v1/health" {
		t.Fatalf("a worker that answers lost its test (%v) or was not asked (%q)", context.Cause(ctx), asked)
	}

	srv.Close()
	c.confirmDead(context.Background(), "vm1", api)
	if e, ok := deadCause(context.Cause(ctx)); !ok || e.node != "vm1" {
		t.Fatalf("a worker that does not answer kept its test: %v", context.Cause(ctx))
	}
}

// nodeDead ends the tasks of that node, either end, and no other.
func TestNodeDeadEndsOnlyItsTasks(t *testing.T) {
	f := newInflight()
	pairs := [][2]string{{"a", "b"}, {"c", "d"}, {"e", "b"}}
	ctxs := make([]context.Context, len(pairs))
	for i, p := range pairs {
		var release taskRef
		ctxs[i], release = f.track(context.Background(), 0, p[0], p[1])
		defer release.done()
	}
	if n := f.running("b"); n != 2 {
		t.Fatalf("running(b) = %d, want 2", n)
	}
	if n := f.nodeDead("b"); n != 2 {
		t.Fatalf("nodeDead(b) = %d, want 2", n)
	}
	for i, want := range []bool{true, false, true} {
		if _, dead := deadCause(context.Cause(ctxs[i])); dead != want {
			t.Errorf("task %v: ended as dead = %v, want %v", pairs[i], dead, want)
		}
	}
}

// A tracked task ends when its caller's context ends, with that context's
// cause; the tasks of one caller share one watch, dropped with the last.
func TestTrackEndsWithItsCaller(t *testing.T) {
	f := newInflight()
	cause := errors.New("the sweep was stopped")
	parent, stop := context.WithCancelCause(context.Background())
	ctx1, release1 := f.track(parent, time.Hour, "a", "b")
	ctx2, release2 := f.track(parent, 0, "c", "d")
	other, release3 := f.track(context.Background(), 0, "e", "f")
	defer release3.done()
	f.mu.Lock()
	watches := len(f.parents)
	f.mu.Unlock()
	if watches != 1 {
		t.Fatalf("%d watches for one caller's context, want 1", watches)
	}
	stop(cause)
	for i, ctx := range []context.Context{ctx1, ctx2} {
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("task %d still running 10 s after its caller's context ended", i+1)
		}
		if got := context.Cause(ctx); got != cause {
			t.Errorf("task %d ended with %v, want its caller's cause", i+1, got)
		}
	}
	if other.Err() != nil {
		t.Fatalf("a task of another caller ended: %v", context.Cause(other))
	}
	// One already ended ends at once.
	late, release4 := f.track(parent, 0, "a", "b")
	if context.Cause(late) != cause {
		t.Fatalf("a task tracked under an ended context runs on: %v", context.Cause(late))
	}
	release1.done()
	release2.done()
	release4.done()
	f.mu.Lock()
	watches = len(f.parents)
	f.mu.Unlock()
	if watches != 0 {
		t.Fatalf("%d watches left after every task was released", watches)
	}
}

// A live caller's context keeps its watch between tasks, and the idle
// watches of many such contexts stay bounded.
func TestTrackKeepsFewIdleWatches(t *testing.T) {
	f := newInflight()
	watches := func() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.parents) }
	parent, stop := context.WithCancel(context.Background())
	for range 3 {
		_, release := f.track(parent, 0, "a", "b")
		release.done()
	}
	if n := watches(); n != 1 {
		t.Fatalf("%d watches for one live context between its tasks, want 1", n)
	}
	stop()
	_, release := f.track(parent, 0, "a", "b")
	release.done()
	wait.For(t, "the ended context's watch to go", func() bool { return watches() == 0 })
	var stops []context.CancelFunc
	defer func() {
		for _, s := range stops {
			s()
		}
	}()
	for range 5 * maxIdleWatches {
		ctx, s := context.WithCancel(context.Background())
		stops = append(stops, s)
		_, release := f.track(ctx, 0, "a", "b")
		release.done()
		if n := watches(); n > maxIdleWatches {
			t.Fatalf("%d idle watches, want at most %d", n, maxIdleWatches)
		}
	}
}

// A task with a timeout ends at it, with DeadlineExceeded as its cause,
// and no other task does; the goroutine that ends them stops once no task
// has a deadline, and a freed slot is used again.
func TestTrackExpires(t *testing.T) {
	f := newInflight()
	short, r1 := f.track(context.Background(), time.Millisecond, "a", "b")
	long, r2 := f.track(context.Background(), time.Hour, "c", "d")
	none, r3 := f.track(context.Background(), 0, "e", "f")
	select {
	case <-short.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a task with a 1 ms timeout still runs 10 s later")
	}
	if !errors.Is(context.Cause(short), context.DeadlineExceeded) {
		t.Fatalf("expired with %v, want context.DeadlineExceeded", context.Cause(short))
	}
	if long.Err() != nil || none.Err() != nil {
		t.Fatalf("tasks without an expired deadline ended: %v, %v", context.Cause(long), context.Cause(none))
	}
	r1.done()
	r2.done()
	expiring := func() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.expiring }
	wait.For(t, "the expiry goroutine to stop after the last timed task ended", func() bool { return !expiring() })
	again, r4 := f.track(context.Background(), time.Millisecond, "g", "h")
	<-again.Done()
	r4.done()
	r3.done()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.tasks) != 3 || len(f.free) != 3 {
		t.Fatalf("%d slots, %d free after 4 tasks, 3 at once, all ended: want 3 and 3", len(f.tasks), len(f.free))
	}
}

// stop ends the expiry goroutine though a timed task still runs, and
// waits for it; no task starts another.
func TestStopEndsExpiry(t *testing.T) {
	f := newInflight()
	_, r1 := f.track(context.Background(), time.Hour, "a", "b")
	defer r1.done()
	done := make(chan struct{})
	go func() { f.stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("stop still waits 10 s later for the expiry goroutine")
	}
	_, r2 := f.track(context.Background(), time.Millisecond, "c", "d")
	defer r2.done()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.expiring {
		t.Fatal("a task tracked after stop started the expiry goroutine again")
	}
}

// A task's context is made only when asked for, and says the same as one
// made at once: ended early before it was made, it is born ended with the
// task's cause; made first, it ends with the task. cause says why all along.
func TestTaskContextOnDemand(t *testing.T) {
	f := newInflight()
	before := f.begin(context.Background(), 0, "a", "b")
	defer before.done()
	after := f.begin(context.Background(), 0, "a", "c")
	defer after.done()
	running := f.begin(context.Background(), 0, "c", "d")
	defer running.done()
	made := after.context()
	if before.cause() != nil || made.Err() != nil {
		t.Fatal("a running task has ended")
	}
	if n := f.nodeDead("a"); n != 2 {
		t.Fatalf("nodeDead ended %d tasks, want 2", n)
	}
	for name, r := range map[string]taskRef{"made before": after, "made after": before} {
		ctx := r.context()
		var dead errPeerDead
		if ctx.Err() == nil || !errors.As(context.Cause(ctx), &dead) || dead.node != "a" || !errors.As(r.cause(), &dead) {
			t.Errorf("context %s the peer's death: %v (cause %v)", name, context.Cause(ctx), r.cause())
		}
	}
	if running.cause() != nil || running.context().Err() != nil {
		t.Error("a task between other nodes ended")
	}
	expiring := f.begin(context.Background(), time.Millisecond, "e", "f")
	defer expiring.done()
	ctx := expiring.context()
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), context.DeadlineExceeded) || !errors.Is(expiring.cause(), context.DeadlineExceeded) {
		t.Fatalf("an expired task: %v (cause %v)", context.Cause(ctx), expiring.cause())
	}
}

// A worker the coordinator cannot dial is unreachable while gossip sees
// it alive (its test did not run) and a lost peer once gossip does not.
func TestTaskFailureUnreachable(t *testing.T) {
	c := &Coordinator{reg: newRegistry(), inflight: newInflight(), log: slog.New(slog.DiscardHandler)}
	task := &wire.Task{Src: "vm3", Dst: "vm1"}
	refused := errors.New("connect: connection refused")
	// Without gossip nothing proves the worker alive: a lost peer.
	if e := c.taskFailure(nil, task, "10.77.0.13:7947", time.Second, refused); e.Class != probe.ClassPeerLost {
		t.Fatalf("no gossip: %+v", e)
	}
	// The same failure once liveness is proven: the control network's.
	if e := probe.Unreachable(true, task.Src, "10.77.0.13:7947", "the coordinator", refused); e.Class != probe.ClassUnreachable ||
		!strings.Contains(e.Cause, "cannot reach worker vm3 at 10.77.0.13:7947 from the coordinator") || !strings.Contains(e.Fix, "control network") {
		t.Fatalf("alive: %+v", e)
	}
}
