// Package live runs a worker's side of the always-on mesh: one probe port
// per HCA (fabric.Prober), the targets the coordinator's plan gives it
// (package liveplan), probes sent at the planned rates, answers matched,
// and one summary per target per window kept for the coordinator to
// collect. Memory is bounded by the plan's fan-out and the windows kept,
// never by time or probe rate.
package live

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/liveplan"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// Options tune the runner; zero fields take the defaults.
type Options struct {
	// LossTimeout declares a probe lost (default 2s: far beyond any RTT
	// a healthy fabric shows, short enough to see loss within a window).
	LossTimeout time.Duration
	// Tick is how often probes are sent and timeouts checked (100ms: a
	// target gets a few probes a second, and a tick costs a pass over the
	// HCA's targets).
	Tick time.Duration
	// Keep is how many finished windows of summaries are kept (6).
	Keep int
	// Now is the clock (time.Now); tests pass their own.
	Now func() time.Time
}

func (o Options) orDefaults() Options {
	o.LossTimeout = cmp.Or(o.LossTimeout, 2*time.Second)
	o.Tick = cmp.Or(o.Tick, 100*time.Millisecond)
	o.Keep = cmp.Or(o.Keep, 6)
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Runner is one worker's prober. Open, then Run in one goroutine; SetPlan,
// Hold and Summaries may be called from any goroutine.
type Runner struct {
	node   string
	prober fabric.Prober
	opts   Options
	log    *slog.Logger

	planSet chan struct{} // SetPlan wakes an idle Run

	mu      sync.Mutex
	plan    *liveplan.Plan
	rails   map[int]*railProbe
	done    []liveplan.Summary // finished windows, oldest first
	windows []int64            // the distinct windows in done, oldest first
}

// New makes a runner for node; log may be nil.
func New(node string, p fabric.Prober, opts Options, log *slog.Logger) *Runner {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Runner{node: node, prober: p, opts: opts.orDefaults(), log: log, rails: map[int]*railProbe{},
		planSet: make(chan struct{}, 1)}
}

// Open opens a probe port on every usable port, by rail, and returns
// their addresses for the inventory. A port that cannot be opened is
// left out and logged: the plan then has no address for it, and its
// peers' probes to it are not sent.
func (r *Runner) Open(ctx context.Context, ports []probe.Port) (map[int]fabric.ProbeAddr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	addrs := map[int]fabric.ProbeAddr{}
	var errs []error
	for _, p := range ports {
		if !p.Usable || r.rails[p.Rail] != nil {
			continue
		}
		pp, addr, err := r.open(ctx, p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r.rails[p.Rail] = &railProbe{rail: p.Rail, port: pp, trackers: map[target]*liveplan.Tracker{},
			credit: map[target]float64{}, window: -1}
		addrs[p.Rail] = addr
	}
	if len(addrs) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return addrs, nil
}

func (r *Runner) open(ctx context.Context, p probe.Port) (fabric.ProbePort, fabric.ProbeAddr, error) {
	pp, err := r.prober.OpenProbe(ctx, p.Device, cmp.Or(p.Port, 1))
	if err != nil {
		r.log.Warn("live probing: cannot open a probe port", "device", p.Device, "rail", p.Rail, "err", err)
		return nil, fabric.ProbeAddr{}, err
	}
	addr := pp.Addr()
	if p.GID != "" && addr.GID == "" {
		addr.GID = p.GID
	}
	return pp, addr, nil
}

// Reopen gives each rail in stale a new probe port on its port in ports,
// if usable, in place of the old one: a device that was removed and came
// back took its probe port with it (the fabric closes them), and only a
// new one, at a new address, can probe again. The rail keeps its targets
// and trackers. It returns the new addresses by rail; a rail whose port
// cannot be opened keeps the old one and is tried again at the next call.
func (r *Runner) Reopen(ctx context.Context, ports []probe.Port, stale map[int]bool) map[int]fabric.ProbeAddr {
	r.mu.Lock()
	defer r.mu.Unlock()
	addrs := map[int]fabric.ProbeAddr{}
	for _, p := range ports {
		rp := r.rails[p.Rail]
		if !p.Usable || !stale[p.Rail] || rp == nil {
			continue
		}
		pp, addr, err := r.open(ctx, p)
		if err != nil {
			continue
		}
		rp.mu.Lock()
		old := rp.port
		rp.port = pp // the peers learn its address with the plan the new inventory brings
		rp.mu.Unlock()
		_ = old.Close()
		addrs[p.Rail] = addr
	}
	return addrs
}

// SetPlan installs plan unless it is the one running; targets change at
// the next tick. Any other ID wins, not only a higher one: a new leader
// that restored from a snapshot may number its plan afresh.
func (r *Runner) SetPlan(plan *liveplan.Plan) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if plan == nil || (r.plan != nil && plan.ID == r.plan.ID) {
		return false
	}
	r.plan = plan
	select {
	case r.planSet <- struct{}{}:
	default:
	}
	for _, rp := range r.rails {
		rp.mu.Lock()
		rp.window = -1 // re-target now
		rp.mu.Unlock()
	}
	return true
}

// PlanID is the running plan's ID (0: none).
func (r *Runner) PlanID() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.plan == nil {
		return 0
	}
	return r.plan.ID
}

// Hold pauses probing on a rail while a sweep's test uses its HCA, so
// neither disturbs the other's figures; the returned func resumes it. The
// window's summaries say they were held.
func (r *Runner) Hold(rail int) func() {
	r.mu.Lock()
	rp := r.rails[rail]
	r.mu.Unlock()
	if rp == nil {
		return func() {}
	}
	rp.mu.Lock()
	rp.held++
	rp.heldWindow = true
	rp.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			rp.mu.Lock()
			rp.held--
			rp.mu.Unlock()
		})
	}
}

// Summaries returns the summaries of the finished windows after since,
// and the newest finished window (since itself when there is none).
func (r *Runner) Summaries(since int64) (int64, []liveplan.Summary) {
	r.mu.Lock()
	defer r.mu.Unlock()
	latest := since
	var out []liveplan.Summary
	for _, s := range r.done {
		if s.Window > since {
			out = append(out, s)
			latest = max(latest, s.Window)
		}
	}
	return latest, out
}

// Run probes until ctx ends, then closes the probe ports. Everything
// happens on its goroutine: each tick reads the answers, expires what is
// overdue and sends what is due.
func (r *Runner) Run(ctx context.Context) error {
	r.mu.Lock()
	rails := make([]*railProbe, 0, len(r.rails))
	for _, rp := range r.rails {
		rails = append(rails, rp)
	}
	r.mu.Unlock()

	defer func() {
		for _, rp := range rails {
			rp.mu.Lock()
			_ = rp.port.Close()
			rp.mu.Unlock()
		}
	}()

	// Without a plan there is nothing to send: wait for one rather than
	// tick, so a worker whose coordinator runs no live mesh costs nothing.
	select {
	case <-ctx.Done():
		return nil
	case <-r.planSet:
	}
	t := time.NewTicker(r.opts.Tick)
	defer t.Stop()
	last := r.opts.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		now := r.opts.Now()
		dt := now.Sub(last)
		last = now
		r.mu.Lock()
		plan := r.plan
		r.mu.Unlock()
		for _, rp := range rails {
			if fin := rp.tick(plan, r.node, now, dt, r.opts.LossTimeout); len(fin) > 0 {
				r.keep(fin)
			}
		}
	}
}

// keep appends a finished window's summaries and drops windows beyond Keep.
func (r *Runner) keep(fin []liveplan.Summary) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = append(r.done, fin...)
	w := fin[0].Window
	if n := len(r.windows); n == 0 || r.windows[n-1] < w {
		r.windows = append(r.windows, w)
	}
	if len(r.windows) <= r.opts.Keep {
		return
	}
	cut := r.windows[len(r.windows)-r.opts.Keep]
	r.windows = r.windows[len(r.windows)-r.opts.Keep:]
	i := 0
	for i < len(r.done) && r.done[i].Window < cut {
		i++
	}
	r.done = append([]liveplan.Summary(nil), r.done[i:]...)
}
