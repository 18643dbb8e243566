package pathtrace

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Defaults of Config.
const (
	DefaultKeep     = 10 * time.Minute
	DefaultMaxPaths = 4096
)

// Config sets up a Tracer. The zero value takes every default.
type Config struct {
	Options // how each trace runs
	// Keep is how long a complete path is answered from the cache; a path
	// with an unknown hop is kept a tenth as long, so a hop that was
	// rate-limited is asked again soon. Negative: nothing is kept.
	Keep     time.Duration
	MaxPaths int // paths kept at most; the one due to expire first makes room
}

// Tracer traces flows on demand and keeps their paths: a flow's path
// changes only when the fabric's routes do, and every probe costs a
// switch's CPU an ICMP. Traces of one flow at once share one run (they
// could not both bind its source port). A Tracer runs no goroutine of its
// own: each trace runs on its caller's, in its caller's network namespace.
type Tracer struct {
	cfg   Config
	trace func(context.Context, Flow, Options) (Path, error) // Trace; tests fake it
	now   func() time.Time

	mu      sync.Mutex
	kept    map[Flow]kept
	running map[Flow]*run
}

type kept struct {
	path  Path
	until time.Time
}

// run is a trace in progress that callers of the same flow wait on.
type run struct {
	done     chan struct{}
	path     Path
	err      error
	canceled bool // its caller's context ended it: the waiters trace again
}

// NewTracer makes a Tracer; its Options are checked by every Trace.
func NewTracer(c Config) *Tracer {
	if c.Keep == 0 {
		c.Keep = DefaultKeep
	}
	if c.MaxPaths <= 0 {
		c.MaxPaths = DefaultMaxPaths
	}
	return &Tracer{cfg: c, trace: Trace, now: time.Now, kept: map[Flow]kept{}, running: map[Flow]*run{}}
}

// Trace answers f's path from the cache while it is fresh, else traces it
// (see the package's Trace). A flow without a source port is traced every
// time: each trace picks its own.
func (t *Tracer) Trace(ctx context.Context, f Flow) (Path, error) {
	f = f.normal()
	if f.SrcPort == 0 {
		return t.trace(ctx, f, t.cfg.Options)
	}
	for {
		t.mu.Lock()
		if k, ok := t.kept[f]; ok && t.now().Before(k.until) {
			t.mu.Unlock()
			return clonePath(k.path), nil
		}
		r, busy := t.running[f]
		if !busy {
			r = &run{done: make(chan struct{})}
			t.running[f] = r
		}
		t.mu.Unlock()
		if !busy {
			return t.lead(ctx, f, r)
		}
		select {
		case <-r.done:
		case <-ctx.Done():
			return Path{Flow: f}, context.Cause(ctx)
		}
		if !r.canceled {
			return clonePath(r.path), r.err
		}
	}
}

// lead runs the trace others of the flow wait on, and keeps its path.
func (t *Tracer) lead(ctx context.Context, f Flow, r *run) (Path, error) {
	r.path, r.err = t.trace(ctx, f, t.cfg.Options)
	r.canceled = ctx.Err() != nil
	t.mu.Lock()
	delete(t.running, f)
	if r.err == nil && !r.canceled && t.cfg.Keep > 0 {
		t.keep(f, r.path)
	}
	t.mu.Unlock()
	close(r.done)
	return clonePath(r.path), r.err
}

// keep stores p under t.mu, making room first.
func (t *Tracer) keep(f Flow, p Path) {
	now := t.now()
	for k, v := range t.kept {
		if !now.Before(v.until) {
			delete(t.kept, k)
		}
	}
	if _, ok := t.kept[f]; !ok && len(t.kept) >= t.cfg.MaxPaths {
		oldest, first := Flow{}, true
		for k, v := range t.kept {
			if first || v.until.Before(t.kept[oldest].until) {
				oldest, first = k, false
			}
		}
		delete(t.kept, oldest)
	}
	d := t.cfg.Keep
	if !p.Complete {
		d /= 10
	}
	t.kept[f] = kept{path: p, until: now.Add(d)}
}

func clonePath(p Path) Path {
	p.Hops = slices.Clone(p.Hops)
	p.Loss = slices.Clone(p.Loss)
	return p
}

// Loss measures f's hop loss over its first ttls hops (MeasureLoss). It
// is never cached: loss is what the links do now.
func (t *Tracer) Loss(ctx context.Context, f Flow, ttls int, o LossOptions) ([]HopCount, error) {
	return MeasureLoss(ctx, f, ttls, o)
}
