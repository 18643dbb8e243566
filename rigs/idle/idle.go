// Package idle measures what one idle rdmamesh worker costs its host in a
// large gossip pool (make idle-cost; the method and the figures are in
// docs/scale.md, "Idle cost of a worker").
//
// The measured worker is the real binary, started as `rdmamesh worker` on
// the simulated fabric with the product's LAN gossip profile, bound to
// loopback and joined to a pool of N-1 peers in this process. The peers
// are memberlist members built by member.Config (the worker's LAN timers,
// its metadata, the gossip key when there is one) on loopback sockets; they
// gossip and push/pull as LAN members do, and differ from a worker only
// where it does not change what an idle pool sends the worker (poolTune).
// Once the worker sees every member, every peer sees the worker and its
// own join gossip is over, its CPU (utime+stime) and resident memory are
// read from /proc over a window, with the gossip that crossed between it
// and the pool, counted at the peers' sockets.
package idle

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/rdmamesh/rdmamesh/internal/testkit/procstat"
)

// Config is one measurement.
type Config struct {
	Bin     string // the rdmamesh binary whose worker is measured
	Members int    // pool size, the measured worker included (at least 2)
	Key     bool   // gossip encryption (gossip.key_file), as a secured install runs
	// PeerCompression has the peers compress their gossip as LAN members
	// do (see poolTune for what it costs the harness).
	PeerCompression bool
	// Window is how long the settled worker is measured; 0 = one push/pull
	// interval of a pool this size (memberlist scales it with log2 N: 3 min
	// at 1,024), at least a minute.
	Window time.Duration
	// RSSLimit stops the run once this process and the worker hold more
	// resident memory; 0 = DefaultRSSLimit.
	RSSLimit uint64
	// Wait bounds each wait (the pool forming, the worker converging and
	// going quiet); 0 = 15 minutes.
	Wait time.Duration
	// Calm is the length of the windows in which the pool, then the
	// worker, must send little (three in a row) before it counts as
	// settled; 0 = 5 s.
	Calm time.Duration
	// Live gives the settled worker the always-on mesh's plan for a pool
	// this size before the window (pushPlan), so the window measures it
	// probing at the shipped rates.
	Live bool
	Dir  string    // work directory ("" = a temporary one, removed)
	Log  io.Writer // progress; nil = none
}

// DefaultRSSLimit is where a run stops itself: a 1,024-member pool holds
// about 1.3 GB, and this machine (24 GiB) is shared.
const DefaultRSSLimit = 8 << 30

// Result is one measurement. CPU shares are of one core.
type Result struct {
	Members         int
	Key             bool
	PeerCompression bool
	Live            bool
	ProbeRate       float64 // probes/s the plan has the worker send (Live)

	Form    time.Duration // the pool forming, before the worker starts
	Join    time.Duration // the worker's start until it was settled
	JoinCPU time.Duration // the worker's CPU in that time
	JoinHWM uint64        // its peak resident memory by then (the join included)

	Window  time.Duration
	CPU     float64     // the worker's CPU over the window
	CPUMax  float64     // its busiest 10 s of the window (a push/pull shows here)
	RSSMean uint64      // its VmRSS, sampled every second
	RSSMax  uint64      //
	HWM     uint64      // its VmHWM in the window (reset at its start)
	Traffic TrafficSnap // gossip between the worker and the pool in the window
	Pings   int64       // the pool's pings to the worker in the window
	Acked   int64       // of which answered

	WorkerSees          int // members the worker sees at the end (its /metrics)
	PeersMin, PeersMax  int // members the peers see at the end
	HarnessCPU          float64
	HarnessRSS, GuardHi uint64 // this process at the end; the guard's peak (this process + the worker)
}

// Run builds the pool, starts the worker, lets it settle and measures it.
func Run(ctx context.Context, cfg Config) (res Result, err error) {
	if cfg.Members < 2 {
		return res, fmt.Errorf("idle: members %d: the pool needs the worker and at least one peer", cfg.Members)
	}
	if _, err := os.Stat(cfg.Bin); err != nil {
		return res, fmt.Errorf("idle: the rdmamesh binary: %w (go build -o bin/rdmamesh ./cmd/rdmamesh)", err)
	}
	logw := cfg.Log
	if logw == nil {
		logw = io.Discard
	}
	say := func(format string, a ...any) {
		fmt.Fprintf(logw, "idle %d: %s\n", cfg.Members, fmt.Sprintf(format, a...))
	}
	wait := cfg.Wait
	if wait <= 0 {
		wait = 15 * time.Minute
	}
	if cfg.Calm <= 0 {
		cfg.Calm = 5 * time.Second
	}
	window := cfg.Window
	if window <= 0 {
		window = max(time.Minute, pushPullInterval(cfg.Members))
	}
	if cfg.Dir == "" {
		if cfg.Dir, err = os.MkdirTemp("", "rdmamesh-idle-"); err != nil {
			return res, err
		}
		defer os.RemoveAll(cfg.Dir)
	}
	res.Members, res.Key, res.PeerCompression = cfg.Members, cfg.Key, cfg.PeerCompression

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var measured atomic.Pointer[worker]
	limit := cfg.RSSLimit
	if limit == 0 {
		limit = DefaultRSSLimit
	}
	guard := &procstat.Guard{Limit: limit, Name: "the idle harness", Children: func() map[string]int {
		if w := measured.Load(); w != nil {
			return map[string]int{"the worker": w.pid()}
		}
		return nil
	}}
	stopGuard := guard.Start(ctx, cancel)
	defer func() {
		var hit error
		res.GuardHi, hit = stopGuard()
		if hit != nil {
			err = hit
		}
	}()

	var key []byte
	if cfg.Key {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	start := time.Now()
	p, err := startPool(cfg.Members-1, key, cfg.PeerCompression)
	if err != nil {
		return res, err
	}
	defer p.stop()
	if err := p.join(ctx, say); err != nil {
		return res, fmt.Errorf("the pool did not form: %w", err)
	}
	peers := cfg.Members - 1
	err = poll(ctx, wait, time.Second, func() (bool, error) {
		lo, _ := p.seen()
		return lo == peers, nil
	})
	if err != nil {
		return res, fmt.Errorf("the peers never all saw each other: %w", err)
	}
	// No peer probes, so a formed pool sends no UDP at all: what is left
	// is the join gossip draining (dropped).
	err = quiet(ctx, wait, cfg.Calm, say, "the pool's join gossip (dropped)", &p.traffic.PoolPackets, float64(peers)/20+1)
	if err != nil {
		return res, err
	}
	p.deliver()
	res.Form = time.Since(start)
	say("%d peers formed a pool in %s", peers, res.Form.Round(time.Second))

	start = time.Now()
	w, err := startWorker(ctx, cfg.Bin, cfg.Dir, p.hub(), key)
	if err != nil {
		return res, err
	}
	measured.Store(w)
	defer w.stop()
	addr, err := net.ResolveUDPAddr("udp", w.gossip)
	if err != nil {
		return res, fmt.Errorf("the worker's gossip address %q: %w", w.gossip, err)
	}
	ping := startPinger(ctx, p.peers, addr, memberlist.DefaultLANConfig().ProbeInterval)
	defer ping.stop()
	err = poll(ctx, wait, time.Second, func() (bool, error) {
		if !w.running() {
			return false, fmt.Errorf("the worker exited: %s", w.tail())
		}
		n, err := w.members(ctx)
		lo, _ := p.seen()
		return err == nil && n == cfg.Members && lo == cfg.Members, nil
	})
	if err != nil {
		return res, fmt.Errorf("the worker and the pool never saw each other: %w (worker log: %s)", err, w.tail())
	}
	// An idle member sends about two packets a second: its probe and the
	// ack to the pool's probe. Its join gossip (every member it learned,
	// rebroadcast) is several times that.
	if err := quiet(ctx, wait, cfg.Calm, say, "the worker's join gossip", &p.traffic.PacketsOut, 4); err != nil {
		return res, err
	}
	pid := w.pid()
	res.Join = time.Since(start)
	if res.JoinCPU, err = procstat.CPU(pid); err != nil {
		return res, fmt.Errorf("the worker's CPU: %w", err)
	}
	res.JoinHWM = procstat.HWM(pid)
	if err := procstat.ResetPeak(pid); err != nil {
		return res, fmt.Errorf("reset the worker's VmHWM: %w", err)
	}
	if cfg.Live {
		if res.ProbeRate, err = w.pushPlan(ctx, cfg.Members); err != nil {
			return res, fmt.Errorf("the live plan: %w", err)
		}
		res.Live = true
		say("the worker probes at %.0f probes/s under a %d-member live plan", res.ProbeRate, cfg.Members)
	}
	say("the worker (pid %d) settled %s after its start (%.2f s of CPU, peak RSS %s); measuring for %s", pid, res.Join.Round(time.Second),
		res.JoinCPU.Seconds(), procstat.MB(res.JoinHWM), window)

	if err := measure(ctx, &res, w, p, ping, window); err != nil {
		return res, err
	}
	if res.WorkerSees, err = w.members(ctx); err != nil {
		return res, fmt.Errorf("the worker's /metrics after the window: %w", err)
	}
	res.PeersMin, res.PeersMax = p.seen()
	return res, nil
}

// measure reads the worker (and this process) over the window.
func measure(ctx context.Context, res *Result, w *worker, p *pool, ping *pinger, window time.Duration) error {
	pid := w.pid()
	cpu0, err := procstat.CPU(pid)
	if err != nil {
		return err
	}
	self0, _ := procstat.CPU(procstat.Self)
	tr0, sent0, acked0 := p.traffic.Snap(), ping.sent.Load(), ping.acked.Load()
	t0 := time.Now()
	var sum uint64
	var n int
	last, lastAt := cpu0, t0
	err = poll(ctx, window+time.Minute, time.Second, func() (bool, error) {
		if !w.running() {
			return false, fmt.Errorf("the worker exited during the window: %s", w.tail())
		}
		r := procstat.RSS(pid)
		sum, n, res.RSSMax = sum+r, n+1, max(res.RSSMax, r)
		if el := time.Since(lastAt); el >= 10*time.Second {
			c, err := procstat.CPU(pid)
			if err != nil {
				return false, err
			}
			res.CPUMax = max(res.CPUMax, (c-last).Seconds()/el.Seconds())
			last, lastAt = c, time.Now()
		}
		return time.Since(t0) >= window, nil
	})
	if err != nil {
		return err
	}
	cpu1, err := procstat.CPU(pid)
	if err != nil {
		return err
	}
	self1, _ := procstat.CPU(procstat.Self)
	res.Window = time.Since(t0)
	res.CPU = (cpu1 - cpu0).Seconds() / res.Window.Seconds()
	res.HarnessCPU = (self1 - self0).Seconds() / res.Window.Seconds()
	res.Traffic = p.traffic.Snap().Sub(tr0)
	res.Pings, res.Acked = ping.sent.Load()-sent0, ping.acked.Load()-acked0
	res.HWM = procstat.HWM(pid)
	res.RSSMean = sum / uint64(n)
	res.HarnessRSS = procstat.RSS(procstat.Self)
	return nil
}

// quiet waits until counter grows by less than rate a second in three
// windows of span in a row.
func quiet(ctx context.Context, wait, span time.Duration, say func(string, ...any), what string, counter *atomic.Int64, rate float64) error {
	last, at, calm := counter.Load(), time.Now(), 0
	err := poll(ctx, wait, span/20, func() (bool, error) {
		el := time.Since(at)
		if el < span {
			return false, nil
		}
		now := counter.Load()
		r := float64(now-last) / el.Seconds()
		last, at = now, time.Now()
		if calm++; r >= rate {
			calm = 0
			say("%s: %.0f packets/s", what, r)
		}
		return calm >= 3, nil
	})
	if err != nil {
		return fmt.Errorf("%s never went below %.1f packets/s: %w", what, rate, err)
	}
	return nil
}

// pushPullInterval is memberlist's push/pull period in a LAN pool of n:
// 30 s, times log2(n) - log2(32) + 1 past 32 members (its pushPullScale).
func pushPullInterval(n int) time.Duration {
	base := memberlist.DefaultLANConfig().PushPullInterval
	if n <= 32 {
		return base
	}
	return time.Duration(math.Ceil(math.Log2(float64(n))-math.Log2(32))+1) * base
}
