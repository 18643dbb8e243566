package coordinator

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	mu sync.Mutex
	// tasks is a table of slots, free ones (cancel nil) listed in free: a
	// map's insert and delete were a tenth of what tracking cost.
	tasks   []trackedTask
	free    []int32
	parents map[context.Context]*parentWatch
	// last is the newest caller's context and its watch: a round's tasks
	// all have one caller, so most tasks skip the map.
	lastCtx   context.Context
	lastWatch *parentWatch
	// expiring: a goroutine ends the tasks past their deadline (expire).
	// One goroutine ticking through a few thousand deadlines costs less
	// than a runtime timer armed and stopped for each of millions of tasks.
	// stop ends it and waits for it (expirer); once stopped none starts.
	expiring bool
	stopped  bool
	halt     chan struct{}
	expirer  sync.WaitGroup
}

type trackedTask struct {
	a, b   string
	live   bool // false: a free slot
	parent context.Context
	// The task's own context is made when first asked for (taskRef.context):
	// a task on a stream never needs one, and making one was a fortieth of
	// the leader's CPU at 4,096 nodes. base is what it is made from, cause
	// why the task ended early (nil while it has not).
	base     context.Context
	ctx      context.Context
	cancel   context.CancelCauseFunc // nil until ctx is made
	cause    error
	deadline time.Time // zero: none, or already expired
	w        *parentWatch
	// closer is closed when the task ends early (closeOnEnd): a task
	// stream blocked reading the answer. A context.AfterFunc did the same
	// at a third of the stream's own cost a task.
	closer io.Closer
}

// maxIdleWatches bounds the watches kept without tasks: a caller's
// context that lives on but has no task running.
const maxIdleWatches = 64

// expireTick is how often deadlines are checked: a task ends at most this
// late, against pair timeouts of seconds.
const expireTick = 20 * time.Millisecond

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
	return &inflight{parents: map[context.Context]*parentWatch{}, halt: make(chan struct{})}
}

// stop ends the deadline goroutine and waits for it: the coordinator's Stop
// owns it. Tasks still tracked keep their other ends (a dead peer, their
// caller's context); a deadline passing after stop ends nothing.
func (f *inflight) stop() {
	f.mu.Lock()
	if !f.stopped {
		f.stopped = true
		close(f.halt)
	}
	f.mu.Unlock()
	f.expirer.Wait()
}

// taskRef is a tracked task; its caller must end it with done. A value,
// not a closure, so that tracking a task allocates only its context.
type taskRef struct {
	f    *inflight
	slot int32
}

// begin tracks a task between a and b, and returns its reference, whose
// done the caller must defer. The task ends early when either node is
// declared dead, when ctx ends (with ctx's cause) or, with a timeout, when
// it expires (its cause then is context.DeadlineExceeded): its context
// (taskRef.context) ends then, its closer (closeOnEnd) is closed, and
// taskRef.cause says why. One tracking for all of these, as the leader
// tracks a million tasks a sweep.
func (f *inflight) begin(ctx context.Context, timeout time.Duration, a, b string) taskRef {
	f.mu.Lock()
	base, w := ctx, (*parentWatch)(nil)
	if ctx.Done() != nil {
		w = f.watch(ctx)
		w.n++
		base = w.detached
	}
	t := trackedTask{a: a, b: b, live: true, parent: ctx, base: base, w: w}
	if timeout > 0 {
		t.deadline = time.Now().Add(timeout)
		if !f.expiring && !f.stopped {
			f.expiring = true
			f.expirer.Add(1)
			go f.expire()
		}
	}
	var slot int32
	if n := len(f.free); n > 0 {
		slot, f.free = f.free[n-1], f.free[:n-1]
		f.tasks[slot] = t
	} else {
		slot = int32(len(f.tasks))
		f.tasks = append(f.tasks, t)
	}
	f.mu.Unlock()
	if w != nil && ctx.Err() != nil {
		// The watch may not have run yet.
		f.mu.Lock()
		c := f.tasks[slot].end(context.Cause(ctx))
		f.mu.Unlock()
		closeAll([]io.Closer{c})
	}
	return taskRef{f, slot}
}

// context is the task's context: it carries the caller's values but not
// its deadline, and ends when the task ends early, with the task's cause.
func (r taskRef) context() context.Context {
	f := r.f
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &f.tasks[r.slot]
	if t.ctx == nil {
		t.ctx, t.cancel = context.WithCancelCause(t.base)
		if t.cause != nil {
			t.cancel(t.cause)
		}
	}
	return t.ctx
}

// cause is why the task ended early; nil while it has not.
func (r taskRef) cause() error {
	f := r.f
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tasks[r.slot].cause
}

// watch is ctx's watch, made on first use; f.mu is held.
func (f *inflight) watch(ctx context.Context) *parentWatch {
	if f.lastCtx == ctx {
		return f.lastWatch
	}
	w := f.parents[ctx]
	if w == nil {
		if len(f.parents) >= maxIdleWatches {
			f.pruneIdle()
		}
		w = &parentWatch{detached: context.WithoutCancel(ctx)}
		w.stop = context.AfterFunc(ctx, func() { f.parentDone(ctx) })
		f.parents[ctx] = w
	}
	f.lastCtx, f.lastWatch = ctx, w
	return w
}

// done ends the task and frees its slot.
func (r taskRef) done() {
	f := r.f
	f.mu.Lock()
	t := &f.tasks[r.slot]
	cancel, ctx, w := t.cancel, t.parent, t.w
	*t = trackedTask{}
	f.free = append(f.free, r.slot)
	if w != nil {
		if w.n--; w.n == 0 && ctx.Err() != nil {
			f.dropWatch(ctx) // its AfterFunc has run or is running
		}
	}
	f.mu.Unlock()
	if cancel != nil {
		cancel(nil)
	}
}

// dropWatch forgets ctx's watch; f.mu is held.
func (f *inflight) dropWatch(ctx context.Context) {
	delete(f.parents, ctx)
	if f.lastCtx == ctx {
		f.lastCtx, f.lastWatch = nil, nil
	}
}

// expire ends the tasks past their deadline, every expireTick, until no
// task has one or stop is called: it lives no longer than the tasks it
// watches, and the next task with a timeout starts it again.
func (f *inflight) expire() {
	defer f.expirer.Done()
	tick := time.NewTicker(expireTick)
	defer tick.Stop()
	var closers []io.Closer
	for {
		select {
		case <-f.halt:
			f.mu.Lock()
			f.expiring = false
			f.mu.Unlock()
			return
		case <-tick.C:
		}
		closers = closers[:0]
		now, timed := time.Now(), 0
		f.mu.Lock()
		for i := range f.tasks {
			t := &f.tasks[i]
			if !t.live || t.deadline.IsZero() {
				continue
			}
			if now.Before(t.deadline) {
				timed++
				continue
			}
			closers = append(closers, t.end(context.DeadlineExceeded))
			t.deadline = time.Time{}
		}
		f.expiring = timed > 0
		f.mu.Unlock()
		closeAll(closers)
		if timed == 0 {
			return
		}
	}
}

// parentDone ends the running tasks of a caller's context that ended. The
// watch goes with its last task.
func (f *inflight) parentDone(ctx context.Context) {
	cause := context.Cause(ctx)
	var closers []io.Closer
	defer func() { closeAll(closers) }() // after the unlock below
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.tasks {
		if t := &f.tasks[i]; t.live && t.parent == ctx {
			closers = append(closers, t.end(cause))
		}
	}
	if w := f.parents[ctx]; w != nil && w.n == 0 {
		f.dropWatch(ctx)
	}
}

// pruneIdle drops the watches without tasks; f.mu is held.
func (f *inflight) pruneIdle() {
	for ctx, w := range f.parents {
		if w.n == 0 {
			w.stop()
			f.dropWatch(ctx)
		}
	}
}

// running is how many tracked tasks involve node.
func (f *inflight) running(node string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, t := range f.tasks {
		if t.live && (t.a == node || t.b == node) {
			n++
		}
	}
	return n
}

// nodeDead ends node's tasks as peer-lost and returns how many there were.
func (f *inflight) nodeDead(node string) int {
	var closers []io.Closer
	f.mu.Lock()
	for i := range f.tasks {
		if t := &f.tasks[i]; t.live && (t.a == node || t.b == node) {
			closers = append(closers, t.end(errPeerDead{node}))
		}
	}
	f.mu.Unlock()
	closeAll(closers)
	return len(closers)
}

// end cancels the task with cause and returns its closer, which the
// caller closes once f.mu (held here) is released: a TLS stream's close
// writes an alert, and every task's track and done wait on f.mu.
func (t *trackedTask) end(cause error) io.Closer {
	if t.cause != nil {
		return nil // the first cause stands, as a context's does
	}
	t.cause = cause
	if t.cancel != nil {
		t.cancel(cause)
	}
	c := t.closer
	t.closer = nil
	return c
}

// closeAll closes what ending tasks returned, f.mu released.
func closeAll(cs []io.Closer) {
	for _, c := range cs {
		if c != nil {
			c.Close()
		}
	}
}

// closeOnEnd has c closed if the task ends before done or keepOpen; false,
// with c not taken, when it has already ended.
func (r taskRef) closeOnEnd(c io.Closer) bool {
	f := r.f
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &f.tasks[r.slot]
	if t.cause != nil {
		return false
	}
	t.closer = c
	return true
}

// keepOpen takes back closeOnEnd's closer: true when the task has not
// ended, so the closer was never closed.
func (r taskRef) keepOpen() bool {
	f := r.f
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &f.tasks[r.slot]
	t.closer = nil
	return t.cause == nil
}

// deadCause says whether a task's cause (taskRef.cause, context.Cause)
// is its peer's death.
func deadCause(cause error) (errPeerDead, bool) {
	var e errPeerDead
	ok := errors.As(cause, &e)
	return e, ok
}
