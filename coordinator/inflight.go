package coordinator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// inflight tracks running directional tasks by node, so that when gossip
// declares a node dead its tasks end at once as peer-lost instead of
// waiting out the pair timeout. One flat table: the leader adds and drops
// a million tasks a sweep, and a node dies rarely, so nodeDead scans the
// few thousand running tasks instead of every task paying for an index
// by node.
type inflight struct {
	mu    sync.Mutex
	next  uint64
	tasks map[uint64]trackedTask
}

type trackedTask struct {
	a, b   string
	cancel context.CancelCauseFunc
}

// errPeerDead is the cancel cause of a task whose peer gossip declared dead.
type errPeerDead struct{ node string }

func (e errPeerDead) Error() string {
	return fmt.Sprintf("gossip declared worker %s dead during the test", e.node)
}

func newInflight() *inflight {
	return &inflight{tasks: map[uint64]trackedTask{}}
}

// track returns a context that ends when either node is declared dead or,
// with a timeout, when it expires (its cause then is
// context.DeadlineExceeded), and a release func the caller must defer. One
// context for both, as the leader makes a million of them per sweep.
func (f *inflight) track(ctx context.Context, timeout time.Duration, a, b string) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	var timer *time.Timer
	if timeout > 0 {
		timer = time.AfterFunc(timeout, func() { cancel(context.DeadlineExceeded) })
	}
	f.mu.Lock()
	f.next++
	id := f.next
	f.tasks[id] = trackedTask{a, b, cancel}
	f.mu.Unlock()
	return ctx, func() {
		if timer != nil {
			timer.Stop()
		}
		f.mu.Lock()
		delete(f.tasks, id)
		f.mu.Unlock()
		cancel(nil)
	}
}

// running is how many tracked tasks involve node.
func (f *inflight) running(node string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, t := range f.tasks {
		if t.a == node || t.b == node {
			n++
		}
	}
	return n
}

// nodeDead ends node's tasks as peer-lost and returns how many there were.
func (f *inflight) nodeDead(node string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, t := range f.tasks {
		if t.a == node || t.b == node {
			t.cancel(errPeerDead{node})
			n++
		}
	}
	return n
}

func deadCause(ctx context.Context) (errPeerDead, bool) {
	var e errPeerDead
	ok := errors.As(context.Cause(ctx), &e)
	return e, ok
}
