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
//
// A task's context is not made from its caller's: that would put it in the
// caller's table of children, one insert and delete under the caller's
// lock a task, and every task of a round has the same caller's context
// (at 4,096 nodes, 9 of the leader's 340 CPU-s). Instead each caller's
// context gets one watch, which ends its tasks when it ends, with its
// cause. A watch outlives its tasks (a sweep's tasks come one or two at a
// time when workers answer at once), until its context ends or more than
// maxIdleWatches are idle.
type inflight struct {
	mu      sync.Mutex
	next    uint64
	tasks   map[uint64]trackedTask
	parents map[context.Context]*parentWatch
}

type trackedTask struct {
	a, b   string
	parent context.Context
	cancel context.CancelCauseFunc
}

// maxIdleWatches bounds the watches kept without tasks: a caller's
// context that lives on but has no task running.
const maxIdleWatches = 64

// parentWatch ends a caller's context's tasks when it ends; n is how many
// are running, detached the context they are made from (ctx's values,
// never ending by itself).
type parentWatch struct {
	n        int
	stop     func() bool
	detached context.Context
}

// errPeerDead is the cancel cause of a task whose peer gossip declared dead.
type errPeerDead struct{ node string }

func (e errPeerDead) Error() string {
	return fmt.Sprintf("gossip declared worker %s dead during the test", e.node)
}

func newInflight() *inflight {
	return &inflight{tasks: map[uint64]trackedTask{}, parents: map[context.Context]*parentWatch{}}
}

// track returns a context that ends when either node is declared dead,
// when ctx ends (with ctx's cause) or, with a timeout, when it expires (its
// cause then is context.DeadlineExceeded), and a release func the caller
// must defer. It carries ctx's values but not its deadline. One
// context for both, as the leader makes a million of them per sweep.
func (f *inflight) track(ctx context.Context, timeout time.Duration, a, b string) (context.Context, func()) {
	f.mu.Lock()
	base, w := ctx, (*parentWatch)(nil)
	if ctx.Done() != nil {
		if w = f.parents[ctx]; w == nil {
			if len(f.parents) >= maxIdleWatches {
				f.pruneIdle()
			}
			w = &parentWatch{detached: context.WithoutCancel(ctx)}
			w.stop = context.AfterFunc(ctx, func() { f.parentDone(ctx) })
			f.parents[ctx] = w
		}
		w.n++
		base = w.detached
	}
	tctx, cancel := context.WithCancelCause(base)
	f.next++
	id := f.next
	f.tasks[id] = trackedTask{a, b, ctx, cancel}
	f.mu.Unlock()
	if w != nil && ctx.Err() != nil {
		cancel(context.Cause(ctx)) // the watch may not have run yet
	}
	var timer *time.Timer
	if timeout > 0 {
		timer = time.AfterFunc(timeout, func() { cancel(context.DeadlineExceeded) })
	}
	return tctx, func() {
		if timer != nil {
			timer.Stop()
		}
		f.mu.Lock()
		delete(f.tasks, id)
		if w != nil {
			if w.n--; w.n == 0 && ctx.Err() != nil {
				delete(f.parents, ctx) // its AfterFunc has run or is running
			}
		}
		f.mu.Unlock()
		cancel(nil)
	}
}

// parentDone ends the running tasks of a caller's context that ended. The
// watch goes with its last task.
func (f *inflight) parentDone(ctx context.Context) {
	cause := context.Cause(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range f.tasks {
		if t.parent == ctx {
			t.cancel(cause)
		}
	}
	if w := f.parents[ctx]; w != nil && w.n == 0 {
		delete(f.parents, ctx)
	}
}

// pruneIdle drops the watches without tasks; f.mu is held.
func (f *inflight) pruneIdle() {
	for ctx, w := range f.parents {
		if w.n == 0 {
			w.stop()
			delete(f.parents, ctx)
		}
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
