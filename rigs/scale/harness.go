// Package scale is the scale harness behind `make bench`: one coordinator
// (raft on its real on-disk stores in a temporary data dir) and N simulated
// workers in this process, one quick sweep, and what it cost: time and CPU
// a round, memory, raft log and snapshot bytes (docs/scale.md). Membership
// runs on memberlist's MockNetwork and the worker API on an in-process
// http.RoundTripper (inproc.go): real handlers, real wire messages, no
// sockets.
package scale

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/rdmamesh/rdmamesh/coordinator"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/testkit/procstat"
	"github.com/rdmamesh/rdmamesh/worker"
)

// coordinatorName is the harness's one coordinator, the only member the
// simulated workers keep (passiveGossip).
const coordinatorName = "coordinator"

// Config is one harness run.
type Config struct {
	Nodes  int
	Preset string // "" = ib-8x400
	// LatencyIters is the ping-pong iterations per cell; 0 = the default.
	LatencyIters int
	DataDir      string // "" = a fresh temporary directory, removed afterwards
	Logger       *slog.Logger
	// Payload also streams the matrix JSON once to measure it.
	Payload bool
	// HeapProfile, when set, is where a heap profile is written while the
	// coordinator holds the finished sweep and its matrix.
	HeapProfile string
	// Control answers tasks without running them (null.go): the
	// coordinator, its raft log and FSM alone.
	Control bool
	// Reader > 0 asks for the running sweep's matrix this often, as an
	// open UI does (reader.go).
	Reader time.Duration
	// TCP puts the worker API on real loopback TCP (the workers' own
	// listeners, HTTP/1.1 with kept-alive connections) instead of the
	// in-process transport, so that a run also measures what each task's
	// request costs both ends in the kernel and in net/http.
	TCP bool
	// SweepProfile, when set, receives a CPU profile of the timed sweep
	// alone (POST → done): setup, gossip and the post-sweep snapshot are
	// measured apart and would otherwise hide in its figures.
	SweepProfile io.Writer
	// Labels has the stand-ins run each task under role=worker, so that
	// a CPU profile counts them as the workers' (the coordinator's and
	// workers' goroutines are tagged either way). The two label switches a
	// task were a tenth of the stand-ins' cost (240 ms of a 1,024-node
	// sweep), so only a profiled run pays for them; SweepProfile implies it.
	Labels bool
	// AfterSweep, when set, is called while the coordinator alone holds
	// the finished sweep (workers gone, its matrix analysed), as an
	// operator who opens the UI after a sweep finds it: the browser
	// benchmark serves it from there (web/e2e).
	AfterSweep func(co *coordinator.Coordinator, sweepID string) error
	// Pattern is the sweep's pattern ("" = all-pairs); links and fabric
	// need Tree.
	Pattern string
	// Tree lays a fat tree over the workers (topology.ParseFatTree's keys
	// but nodes, rails, ll and prefix, which the run sets: "leaf=32,
	// spines=16,pods=32,cores=256").
	Tree string
}

// Result is what one run measured. Durations are wall time.
type Result struct {
	Nodes, Rails, Cells, Rounds int
	LatencyIters                int
	Control                     bool          // tasks answered without running (Config.Control)
	TCP                         bool          // the worker API over loopback TCP (Config.TCP)
	WorkerTasks                 int           // task halves the simulated workers ran (0: stand-ins answered all)
	Streams                     int           // task streams: opened in-process, open at the end over TCP (control mode; full mode posts its tasks)
	Setup                       time.Duration // workers up and registered
	Settle                      time.Duration // then until the join gossip has died down
	Sweep                       time.Duration // POST sweep → state done
	SweepCPU                    time.Duration // process CPU (user+sys) during the sweep, workers included
	Steal                       time.Duration // CPU the hypervisor took from the machine during the sweep (all CPUs)
	Dispatch, Commit, Overhead  Dist          // per round
	EntryBytes                  Dist          // raft entry size per round
	StartRSS                    uint64        // whole process as the sweep starts (workers idle)
	PeakRSS, PeakHeap           uint64        // during the sweep, whole process
	HoldRSS, HoldHeap           uint64        // coordinator alone holding the sweep, matrix cached
	// HoldRSSFile is the part of HoldRSS that maps files (RssFile): the
	// binary and raft.db's (the term and vote); the kernel can drop them,
	// the heap it cannot.
	HoldRSSFile uint64
	// FSMHeap and MatrixHeap are the parts of HoldHeap that coordinator/store
	// and matrix code allocated (heapBy: the heap profile's sampled in-use
	// bytes, scaled as pprof scales them).
	FSMHeap, MatrixHeap    uint64
	MatrixPeakRSS          uint64 // peak while building the matrix, coordinator alone
	MatrixBuild            time.Duration
	RaftLogBytes           int64 // sum of raft entry payloads of this run
	RaftFileBytes          int64 // the raft log's segments and raft.db on disk
	SnapshotBytes          int64
	SnapshotTime           time.Duration
	MatrixJSON, MatrixGzip int64 // 0 when not measured
	PayloadTime            time.Duration
	PayloadPeakRSS         uint64 // process peak while streaming the matrix JSON
	UIFirstPaint           int64  // web's compact grid + status layer, gzipped
	// UIServe is how long web took to answer them, from the store, with
	// nothing prepared (a coordinator's preparer would have readied them).
	UIServe                     time.Duration
	ReaderPolls, ReaderMatrices int // a live reader's matrix requests, and the distinct analyses it got
	Healthy                     bool
	Pattern                     string
	// Links and LinksCovered are, with a tree, the switch link directions
	// of every rail plane and those the sweep's tests crossed twice with
	// other partners (its coverage).
	Links, LinksCovered int
	// MemoryLimit is the Go soft memory limit the run had; 0 = none.
	MemoryLimit uint64
}

// Dist is a per-round distribution.
type Dist struct {
	Median, P99, Max time.Duration
	Sum              time.Duration
}

func dist(v []time.Duration) Dist {
	if len(v) == 0 {
		return Dist{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	var sum time.Duration
	for _, x := range s {
		sum += x
	}
	q := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return Dist{Median: q(0.5), P99: q(0.99), Max: s[len(s)-1], Sum: sum}
}

// Run runs one quick sweep over cfg.Nodes workers and measures it.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Nodes < 2 {
		return Result{}, errors.New("scale: need at least 2 nodes")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir := cfg.DataDir
	if dir == "" {
		d, err := os.MkdirTemp("", "rdmamesh-bench-")
		if err != nil {
			return Result{}, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	params := probe.DefaultTestParams()
	if cfg.LatencyIters > 0 {
		params.LatencyIters = cfg.LatencyIters
	}
	fab, err := sim.New(sim.Config{Preset: cfg.Preset, Seed: 1})
	if err != nil {
		return Result{}, err
	}
	obs := newObserver()
	// pprof labels: role=coordinator on every goroutine the coordinator
	// starts, role=worker on the workers' and on handler calls.
	coordCtx := pprof.WithLabels(ctx, pprof.Labels("role", "coordinator"))
	workerCtx := pprof.WithLabels(ctx, pprof.Labels("role", "worker"))
	var (
		mnet  memberlist.MockNetwork
		rt    = newInproc()
		names = make([]string, cfg.Nodes)
		trans = make([]*memberlist.MockTransport, cfg.Nodes)
		meter gossipMeter
	)
	// MockNetwork's maps are not locked: every transport exists before any
	// node starts.
	ctrans := mnet.NewTransport(coordinatorName)
	for i := range names {
		names[i] = fmt.Sprintf("node-%04d", i+1)
		trans[i] = mnet.NewTransport(names[i])
	}
	// Every run is secured as the product's configs are (rdmamesh keygen):
	// the worker API takes the bearer token, and each task carries the
	// two tickets the coordinator signs for it.
	token := rand.Text()
	rt.null, rt.bearer = cfg.Control, "Bearer "+token
	if cfg.Labels || cfg.SweepProfile != nil {
		rt.worker = workerCtx
	}
	res := Result{Nodes: cfg.Nodes, LatencyIters: params.LatencyIters, Control: cfg.Control, TCP: cfg.TCP}
	// Over TCP nothing goes in-process: the stand-ins answer on the
	// workers' own API (standIn), peers call each other by their sockets.
	var coordHTTP, workerHTTP http.RoundTripper // nil: real TCP
	var standIn func(task, out []byte, codes bool) ([]byte, bool)
	apis := rt
	if !cfg.TCP {
		coordHTTP, workerHTTP = rt.from(coordCtx), rt.from(workerCtx)
	} else {
		apis = nil
		if cfg.Control {
			standIn = NullAppend
		}
	}
	topo, err := layTree(cfg, fab, names)
	if err != nil {
		return res, err
	}
	res.Pattern = cfg.Pattern
	start := time.Now()
	var co *coordinator.Coordinator
	pprof.Do(coordCtx, pprof.Labels(), func(context.Context) {
		co, err = coordinator.Start(coordinator.Options{Name: coordinatorName, DataDir: filepath.Join(dir, "coordinator"),
			Transport: ctrans, LAN: true, HTTPTransport: coordHTTP, Params: params, Mode: "quick", FastRaft: true,
			PairTimeout: time.Minute, KeepSweeps: 1, Logger: log, OnRound: obs.round, Token: token, Topology: topo})
	})
	if err != nil {
		return res, err
	}
	coStopped := false
	stopCo := func() {
		if !coStopped {
			coStopped = true
			co.Stop()
		}
	}
	defer stopCo()
	var workers []*worker.Agent
	pprof.Do(workerCtx, pprof.Labels(), func(context.Context) {
		wtrans := make([]memberlist.Transport, len(trans))
		for i, t := range trans {
			wtrans[i] = meter.wrap(t)
		}
		workers, err = startWorkers(ctx, fab, names, wtrans, co.GossipAddr(), token, apis, workerHTTP, standIn, obs, log,
			passiveGossip(func(name string) bool { return name == coordinatorName }))
	})
	// A closure, not stopWorkers(workers): the deferred call must not keep
	// the agents (and the sim's per-node state) alive once they are stopped
	// and dropped below, or they would count as the coordinator's memory.
	defer func() { stopWorkers(workers) }()
	if err != nil {
		return res, err
	}
	if err := waitRegistered(ctx, co, cfg.Nodes); err != nil {
		return res, err
	}
	res.Setup = time.Since(start)
	log.Info("workers registered", "nodes", cfg.Nodes, "setup", res.Setup.Round(time.Millisecond))
	var settled bool
	res.Settle, settled = meter.settle(ctx, cfg.Nodes, 5*time.Minute)
	if !settled {
		log.Warn("workers' gossip still busy; the sweep's figures include it", "waited", res.Settle.Round(time.Millisecond))
	}
	log.Info("gossip settled", "took", res.Settle.Round(time.Millisecond))

	runtime.GC()
	debug.FreeOSMemory()
	res.StartRSS = procstat.RSS(procstat.Self)
	_ = procstat.ResetPeak(procstat.Self)
	heap := procstat.StartHeapSampler(50 * time.Millisecond)
	stopProfile := func() {}
	if cfg.SweepProfile != nil {
		if err := pprof.StartCPUProfile(cfg.SweepProfile); err != nil {
			heap.Stop()
			return res, err
		}
		stopProfile = pprof.StopCPUProfile
	}
	t0, cpu0, steal0 := time.Now(), processCPU(), procstat.Steal()
	info, err := co.StartSweep(ctx, api.SweepRequest{Mode: "quick", Pattern: cfg.Pattern})
	if err != nil {
		stopProfile()
		heap.Stop()
		return res, err
	}
	stopReader := startReader(co, info.ID, cfg.Reader)
	info, err = waitDone(ctx, co, info.ID)
	res.Sweep, res.SweepCPU, res.Steal = time.Since(t0), processCPU()-cpu0, procstat.Steal()-steal0
	stopProfile()
	res.ReaderPolls, res.ReaderMatrices = stopReader()
	res.PeakHeap = heap.Stop()
	res.PeakRSS = procstat.HWM(procstat.Self)
	if err != nil {
		return res, err
	}
	if info.State != api.SweepDone {
		return res, fmt.Errorf("sweep %s ended %s: %s", info.ID, info.State, info.Error)
	}
	res.Rails, res.Cells, res.Rounds = info.Rails, info.CellsDone, info.Rounds
	res.Healthy = info.Healthy != nil && *info.Healthy
	res.Dispatch, res.Commit, res.Overhead, res.EntryBytes = obs.dists()
	res.WorkerTasks = obs.ran()
	res.Streams = int(rt.streams.Load())
	for _, w := range workers {
		res.Streams += w.TaskStreams()
	}

	// The coordinator alone, holding the sweep: workers gone, memory given
	// back, then the matrix built (or taken from the cache) as the API would.
	stopWorkers(workers)
	workers = nil
	rt.clear() // the handlers hold the agents
	// MockTransport delivers on unbuffered channels: a gossip send to a
	// stopped worker blocks for ever and keeps its sender's memberlist,
	// agent and sim state alive. Draining the stopped workers' channels
	// lets those senders finish.
	stopDrain := drain(trans)
	defer stopDrain()
	settle(ctx)
	debug.FreeOSMemory()
	_ = procstat.ResetPeak(procstat.Self)
	t1 := time.Now()
	m, ok := co.Matrix(info.ID)
	res.MatrixBuild = time.Since(t1)
	if !ok {
		return res, fmt.Errorf("sweep %s has no matrix", info.ID)
	}
	res.MatrixPeakRSS = procstat.HWM(procstat.Self)
	if cov, _ := co.SweepCoverage(info.ID); cov != nil {
		for _, p := range cov.Planes {
			res.Links += p.Links
			res.LinksCovered += p.Covered
		}
	}
	runtime.GC()
	res.HoldHeap = procstat.HeapObjects()
	held := heapBy(storePkg, matrixPkg)
	res.FSMHeap, res.MatrixHeap = held[storePkg], held[matrixPkg]
	debug.FreeOSMemory()
	res.HoldRSS = procstat.RSS(procstat.Self)
	res.HoldRSSFile = procstat.Status(procstat.Self, "RssFile")
	if cfg.HeapProfile != "" {
		if err := writeHeapProfile(cfg.HeapProfile); err != nil {
			return res, err
		}
	}
	t4 := time.Now()
	if res.UIFirstPaint, err = firstPaint(co, info.ID); err != nil {
		return res, err
	}
	res.UIServe = time.Since(t4)
	if cfg.AfterSweep != nil {
		if err := cfg.AfterSweep(co, info.ID); err != nil {
			return res, err
		}
	}
	if cfg.Payload {
		_ = procstat.ResetPeak(procstat.Self)
		t3 := time.Now()
		res.MatrixJSON, res.MatrixGzip, err = payload(m)
		if err != nil {
			return res, err
		}
		res.PayloadTime, res.PayloadPeakRSS = time.Since(t3), procstat.HWM(procstat.Self)
	}
	runtime.KeepAlive(m)

	t2 := time.Now()
	if err := co.SnapshotNow(); err != nil {
		return res, fmt.Errorf("snapshot: %w", err)
	}
	res.SnapshotTime = time.Since(t2)
	stopCo()
	res.SnapshotBytes = newestSnapshot(filepath.Join(dir, "coordinator", "snapshots"))
	res.RaftLogBytes, res.RaftFileBytes, err = raftLog(filepath.Join(dir, "coordinator"))
	return res, err
}

// startWorkers starts a simulated worker per name: its API served in-process
// by rt (nil: only on its listener), its calls to peers through peers
// (nil: real TCP), its tasks answered by standIn when set.
//
// The joins run joiners at a time. Each is a push/pull with the
// coordinator, which sends (and compresses) the state of every member it
// has, so N joins one after another cost O(N²) on one goroutine pair:
// 20 s at 2,048, half an hour at 16,384. Concurrent joins let both cores
// work; the total the coordinator sends is the same.
func startWorkers(ctx context.Context, fab *sim.Fabric, names []string, trans []memberlist.Transport, seed, token string,
	rt *inproc, peers http.RoundTripper, standIn func(task, out []byte, codes bool) ([]byte, bool), obs *observer, log *slog.Logger,
	gossip func(*memberlist.Config)) ([]*worker.Agent, error) {
	const joiners = 4
	type join struct {
		name string
		a    *worker.Agent
	}
	jobs := make(chan join)
	var (
		wg      sync.WaitGroup
		errMu   sync.Mutex
		joinErr error
	)
	failed := func() error {
		errMu.Lock()
		defer errMu.Unlock()
		return joinErr
	}
	for range joiners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if err := joinRetrying(ctx, j.a, seed); err != nil {
					errMu.Lock()
					joinErr = cmp.Or(joinErr, fmt.Errorf("worker %s: join: %w", j.name, err))
					errMu.Unlock()
				}
			}
		}()
	}
	out, err := func() ([]*worker.Agent, error) {
		defer close(jobs)
		out := make([]*worker.Agent, 0, len(names))
		for i, name := range names {
			a, err := worker.Start(ctx, worker.Options{Name: name, Fabric: fabric.Adapt(fab.Node(name)),
				Transport: trans[i], LAN: true, GossipTune: gossip, APIListen: "127.0.0.1:0", HTTPTransport: peers, AnswerTask: standIn,
				OnTask: obs.task, Token: token, Logger: log, Labels: map[string]string{"group": fmt.Sprintf("leaf-%02d", i/32+1)}})
			if err != nil {
				return out, fmt.Errorf("worker %s: %w", name, err)
			}
			out = append(out, a)
			if rt != nil { // reachable in-process before gossip announces it
				rt.add(a.APIAddr(), a.Handler())
			}
			if err := failed(); err != nil {
				return out, err
			}
			jobs <- join{name, a}
		}
		return out, nil
	}()
	wg.Wait()
	return out, cmp.Or(err, failed())
}

// joinRetrying joins a to seed, again while memberlist turns the join
// away for having too many push/pulls pending (it closes the stream,
// which the joiner reads as EOF): the coordinator still merging the
// joins before it. A worker's own join loop retries the same way.
func joinRetrying(ctx context.Context, a *worker.Agent, seed string) error {
	var err error
	for try := range 8 {
		if err = a.Join([]string{seed}); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(50<<try) * time.Millisecond):
		}
	}
	return err
}

// settle waits until the stopped workers' goroutines (gossip probes
// waiting out their timeouts, and the like) have ended: the goroutine count
// has not fallen for a second, or ten seconds have passed.
func settle(ctx context.Context) {
	deadline := time.Now().Add(10 * time.Second)
	last, since := runtime.NumGoroutine(), time.Now()
	_ = poll(ctx, 100*time.Millisecond, func() (bool, error) {
		if n := runtime.NumGoroutine(); n < last {
			last, since = n, time.Now()
		}
		return time.Since(since) > time.Second || time.Now().After(deadline), nil
	})
}

// drain discards whatever arrives at the transports until the returned
// func is called; it owns one goroutine per transport.
func drain(trans []*memberlist.MockTransport) func() {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, t := range trans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-t.PacketCh():
				case c := <-t.StreamCh():
					c.Close()
				}
			}
		}()
	}
	return func() {
		close(stop)
		wg.Wait()
	}
}

// stopWorkers stops the agents a few at a time: each leaves gossip first.
func stopWorkers(ws []*worker.Agent) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for _, a := range ws {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			a.Kill()
		}()
	}
	wg.Wait()
}

func waitRegistered(ctx context.Context, co *coordinator.Coordinator, n int) error {
	// Every poll copies and sorts the registry (4,096 inventories at the
	// largest size): a tenth of a second is plenty for a setup of minutes.
	return poll(ctx, 100*time.Millisecond, func() (bool, error) {
		have := 0
		for _, node := range co.Nodes() {
			if node.Role == "worker" && node.Inventory != nil {
				have++
			}
		}
		return have >= n && co.IsLeader(), nil
	})
}

func waitDone(ctx context.Context, co *coordinator.Coordinator, id string) (api.SweepInfo, error) {
	var info api.SweepInfo
	err := poll(ctx, 10*time.Millisecond, func() (bool, error) {
		var ok bool
		info, ok = co.Sweep(id)
		if !ok {
			return false, fmt.Errorf("sweep %s vanished", id)
		}
		return info.State != api.SweepRunning, nil
	})
	return info, err
}

// poll checks cond every tick until it holds, fails, or ctx ends.
func poll(ctx context.Context, every time.Duration, cond func() (bool, error)) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		ok, err := cond()
		if ok || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
