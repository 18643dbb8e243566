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
// waiting out the pair timeout.
type inflight struct {
	mu    sync.Mutex
	next  uint64
	nodes map[string]map[uint64]context.CancelCauseFunc
}

// errPeerDead is the cancel cause of a task whose peer gossip declared dead.
type errPeerDead struct{ node string }

func (e errPeerDead) Error() string {
	return fmt.Sprintf("gossip declared worker %s dead during the test", e.node)
}

func newInflight() *inflight {
	return &inflight{nodes: map[string]map[uint64]context.CancelCauseFunc{}}
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
	for _, n := range [2]string{a, b} {
		if f.nodes[n] == nil {
			f.nodes[n] = map[uint64]context.CancelCauseFunc{}
		}
		f.nodes[n][id] = cancel
	}
	f.mu.Unlock()
	return ctx, func() {
		if timer != nil {
			timer.Stop()
		}
		f.mu.Lock()
		delete(f.nodes[a], id)
		delete(f.nodes[b], id)
		f.mu.Unlock()
		cancel(nil)
	}
}

func (f *inflight) running(node string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.nodes[node])
}

func (f *inflight) nodeDead(node string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, cancel := range f.nodes[node] {
		cancel(errPeerDead{node})
	}
	return len(f.nodes[node])
}

func deadCause(ctx context.Context) (errPeerDead, bool) {
	var e errPeerDead
	ok := errors.As(context.Cause(ctx), &e)
	return e, ok
}
