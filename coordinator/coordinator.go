// Package coordinator learns workers from gossip, runs sweeps as the raft
// leader and serves their results. The sweep engine is coordinator/sweep and
// the replicated state coordinator/store; this package wires them to raft,
// gossip and the workers' HTTP API (run.go, dispatch.go).
package coordinator

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/coordinator/store"
	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/member"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/topology"
)

// Options configure a Coordinator.
type Options struct {
	Name            string
	DataDir         string // empty: in memory
	GossipBind      string
	GossipAdvertise string
	Join            []string
	LAN             bool
	WAN             bool                 // with LAN: WAN gossip timers (gossip.profile wan)
	Transport       memberlist.Transport // tests
	APIAddr         func() string        // advertised API address, known once web listens
	PairTimeout     time.Duration
	Parallelism     int // pairs per round at once; 0 = all
	Params          probe.TestParams
	Mode            string // default sweep mode: quick | full
	Thresholds      matrix.Thresholds
	// Topology is the fabric's switches and cables (package topology):
	// with it every analysis also names the cables, links and switches
	// that explain the bad cells. nil = none.
	Topology *topology.Topology
	// SkipTrace: sweeps do not trace their flows (coordinator.trace_paths
	// false); their cells are routed by the model.
	SkipTrace bool
	// LossProbes: the traced flows of bad cells (and of the worst
	// outliers) have each hop probed this many times for loss
	// (coordinator.trace_loss_probes); 0 = no hop loss.
	LossProbes int
	SweepDefaults
	KeepSweeps int
	Reconcile  time.Duration // full membership reconcile period
	FastRaft   bool
	Logger     *slog.Logger

	// Replication. With RaftBind and RaftTransport empty the coordinator is
	// a single voter on an in-memory transport.
	RaftBind        string
	RaftAdvertise   string
	RaftTimeout     time.Duration  // heartbeat and election timeout; 0 = raft's 1s
	RaftTransport   raft.Transport // tests
	Peers           []Peer         // static bootstrap set (ID=addr), ourselves included
	BootstrapExpect int            // or: bootstrap once this many coordinators are seen in gossip

	// Token is the bearer token for worker API calls and forwarded writes,
	// and the key that signs probe-session tickets.
	Token     string
	GossipKey []byte

	// TLS is the server side of raft's TCP transport; ClientTLS dials
	// workers, the leader's API and raft peers. Nil: plain TCP. The API
	// server itself is the caller's (web, cmd/rdmamesh).
	TLS       *tls.Config
	ClientTLS *tls.Config

	// HTTPTransport carries worker API calls; nil = a pooled TCP transport.
	// The scale harness passes an in-process one (rigs/scale).
	HTTPTransport http.RoundTripper
	// OnRound, when set, sees each committed round's timing (scale harness,
	// metrics). It runs on the sweep goroutine: it must not block.
	OnRound func(RoundTiming)
	// Live runs the always-on mesh on the leader (livemesh.go).
	Live LiveOptions
}

// RoundTiming is what one committed round cost the leader (see
// sweep.RoundTiming); Options.OnRound sees one per round.
type RoundTiming = sweep.RoundTiming

// SweepDefaults are what a sweep request leaves out, and how sweeps are
// judged.
type SweepDefaults struct {
	// Profiles are named thresholds a sweep may pick (SweepRequest.Profile);
	// Profile names the one used when a sweep names none ("" = Thresholds).
	Profiles map[string]matrix.Thresholds
	Profile  string
	// Baseline, when set, is compared with every sweep (its variance rules
	// come from the thresholds in use).
	Baseline  *matrix.Baseline
	Pattern   string        // all-pairs | k-batch | one-to-all | links | fabric
	BatchSize int           // pairs per round for k-batch
	RailMode  string        // same | cross | all
	Budget    time.Duration // whole-sweep time budget; 0 = none
	Retests   int           // confirmation passes of suspect pairs; 0 = none
}

// Peer is one voter of a static bootstrap configuration.
type Peer struct {
	ID   string
	Addr string
}

// Coordinator is a running coordinator replica.
type Coordinator struct {
	opts     Options
	log      *slog.Logger
	fsm      *store.FSM
	raft     *raft.Raft
	closeR   func() error
	ml       *memberlist.Memberlist
	live     *member.Liveness // does a worker whose API we cannot dial answer gossip?
	events   *events
	reg      *registry
	inflight *inflight
	counts   roundCounts // counts.go
	client   *http.Client
	targets  taskTargets // taskreq.go
	// streaming: tasks go over task streams (stream.go) where the
	// transport is a network's; an in-process one has nothing to save.
	streaming bool
	mesh      mesh               // the live mesh; filled on the leader (livemesh.go)
	topo      configuredTopology // topology.go

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	leading bool
	active  string // sweep being run by this leader, "" when idle
	work    chan string

	raftAddr string

	matrixMu sync.Mutex
	matrices map[string]cachedMatrix
	cabling  cablingCache

	notifyCh      chan bool
	leaderChanges atomic.Uint64
}

// Start brings up raft, then gossip, then the loops that own membership
// updates and leadership.
func Start(o Options) (*Coordinator, error) {
	if o.Name == "" {
		return nil, errors.New("coordinator: name is empty")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.PairTimeout <= 0 {
		o.PairTimeout = 10 * time.Second
	}
	if o.Reconcile <= 0 {
		o.Reconcile = 5 * time.Second
	}
	if o.KeepSweeps <= 0 {
		o.KeepSweeps = 50
	}
	if o.Mode == "" {
		o.Mode = "full"
	}
	if o.Thresholds == (matrix.Thresholds{}) {
		o.Thresholds = matrix.DefaultThresholds()
	}
	if _, ok := o.Profiles[o.Profile]; o.Profile != "" && !ok {
		return nil, fmt.Errorf("coordinator.profile %q is not among the loaded profiles %v: fix the name or coordinator.profiles_file", o.Profile, sweep.ProfileNames(o.Profiles))
	}
	if o.APIAddr == nil {
		o.APIAddr = func() string { return "" }
	}
	c := &Coordinator{opts: o, log: o.Logger.With("coordinator", o.Name), fsm: store.New(o.KeepSweeps, o.Logger),
		events: &events{ch: make(chan gossipEvent, 1024)}, reg: newRegistry(), inflight: newInflight(), matrices: map[string]cachedMatrix{}, work: make(chan string, 1),
		client:   &http.Client{Transport: workerTransport(o.HTTPTransport, o.ClientTLS)},
		notifyCh: make(chan bool, 8), topo: newConfiguredTopology(o.Topology)}
	c.streaming = streams(c.client.Transport)
	r, trans, st, err := newRaft(o.Name, o.DataDir, c.fsm, c.notifyCh,
		raftNet{Bind: o.RaftBind, Advertise: o.RaftAdvertise, Transport: o.RaftTransport, Fast: o.FastRaft, Timeout: o.RaftTimeout,
			TLS: o.TLS, ClientTLS: o.ClientTLS}, c.log)
	if err != nil {
		return nil, err
	}
	c.raft, c.closeR, c.raftAddr = r, st.close, string(trans.LocalAddr())
	deferred, err := c.bootstrap(st, trans)
	if err != nil {
		c.shutdownRaft()
		return nil, err
	}
	cfg, err := member.Config(member.Options{Name: o.Name, Bind: o.GossipBind, Advertise: o.GossipAdvertise, LAN: o.LAN, WAN: o.WAN,
		Delegate: &coordDelegate{apiAddr: o.APIAddr, raftAddr: c.raftAddr}, Events: c.events, Logger: c.log, Transport: o.Transport,
		Key: o.GossipKey})
	if err != nil {
		c.shutdownRaft()
		return nil, err
	}
	if c.ml, err = memberlist.Create(cfg); err != nil {
		c.shutdownRaft()
		return nil, fmt.Errorf("gossip: %w", err)
	}
	c.live = member.NewLiveness(c.ml)
	if seeds := append(slices.Clone(o.Join), loadMembers(o.DataDir)...); len(seeds) > 0 {
		if _, err := c.ml.Join(seeds); err != nil {
			c.log.Warn("gossip join failed; workers joining us will still be seen", "seeds", seeds, "err", err)
		}
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.wg.Add(3)
	go func() { defer c.wg.Done(); c.reapStreams(c.ctx) }()
	go func() { defer c.wg.Done(); c.watchMembers(c.ctx) }()
	go func() { defer c.wg.Done(); c.leaderLoop(c.ctx) }()
	if deferred {
		c.wg.Add(1)
		go func() { defer c.wg.Done(); c.awaitBootstrap(c.ctx) }()
	}
	c.log.Info("coordinator up", "gossip", c.ml.LocalNode().Address(), "data_dir", o.DataDir)
	return c, nil
}

// GossipAddr is the memberlist address workers join.
func (c *Coordinator) GossipAddr() string { return c.ml.LocalNode().Address() }

// Join asks gossip seeds again; the command retries until peers are seen.
func (c *Coordinator) Join(seeds []string) error {
	_, err := c.ml.Join(seeds)
	return err
}

// Members is the number of gossip members seen, this one included.
func (c *Coordinator) Members() int { return c.ml.NumMembers() }

// IsLeader reports whether this replica currently runs sweeps.
func (c *Coordinator) IsLeader() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leading
}

// Stop shuts raft and gossip down first, so in-flight leader work fails fast
// instead of waiting out apply timeouts (the next leader resumes the sweep),
// then waits for every goroutine. There is no gossip leave: a restarting
// coordinator must stay a voter. Decommission uses Leave.
func (c *Coordinator) Stop() {
	c.cancel()
	_ = c.ml.Shutdown()
	if err := c.raft.Shutdown().Error(); err != nil {
		c.log.Warn("raft shutdown", "err", err)
	}
	c.wg.Wait()
	c.inflight.stop()
	if err := c.closeR(); err != nil {
		c.log.Warn("raft store close", "err", err)
	}
	c.client.CloseIdleConnections()
}

// Leave announces a permanent departure over gossip; the leader then removes
// this coordinator from the voters. Call Stop afterwards.
func (c *Coordinator) Leave() error { return c.ml.Leave(2 * time.Second) }

func (c *Coordinator) shutdownRaft() {
	if err := c.raft.Shutdown().Error(); err != nil {
		c.log.Warn("raft shutdown", "err", err)
	}
	if err := c.closeR(); err != nil {
		c.log.Warn("raft store close", "err", err)
	}
}

// leaderLoop follows NotifyCh: on gaining leadership it waits for the FSM to
// catch up (Barrier) before touching sweeps, and on losing it cancels the
// leader-only work and waits for it.
func (c *Coordinator) leaderLoop(ctx context.Context) {
	var run *leaderRun
	stop := func() {
		if run != nil {
			run.stop()
			run = nil
		}
		c.mu.Lock()
		c.leading = false
		c.mu.Unlock()
	}
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case isLeader := <-c.notifyCh:
			c.leaderChanges.Add(1)
			if !isLeader {
				c.log.Info("lost leadership")
				stop()
				continue
			}
			if run != nil {
				continue
			}
			if err := c.raft.Barrier(10 * time.Second).Error(); err != nil {
				c.log.Warn("barrier after election failed; waiting for the next change", "err", err)
				continue
			}
			c.log.Info("leading")
			c.mu.Lock()
			c.leading = true
			c.mu.Unlock()
			run = startLeaderRun(ctx, c.lead)
		}
	}
}

// leaderRun owns the goroutine doing leader-only work.
type leaderRun struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func startLeaderRun(parent context.Context, work func(context.Context)) *leaderRun {
	ctx, cancel := context.WithCancel(parent)
	r := &leaderRun{cancel: cancel, done: make(chan struct{})}
	go func() { defer close(r.done); work(ctx) }()
	return r
}

func (r *leaderRun) stop() {
	r.cancel()
	<-r.done
}

// lead runs leader-only work: keep the voter set in step with gossip, resume
// unfinished sweeps, then serve new ones.
func (c *Coordinator) lead(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() { defer wg.Done(); c.reconcileVoters(ctx) }()
	if c.opts.Live.Enabled {
		wg.Add(1)
		go func() { defer wg.Done(); c.runLive(ctx) }()
	}
	if err := c.commitTopology(); err != nil {
		c.log.Warn("cannot commit the fabric topology yet; the next sweep tries again", "err", err)
	}
	for _, id := range c.fsm.Running() {
		c.runSweep(ctx, id)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case id := <-c.work:
			c.runSweep(ctx, id)
		}
	}
}

// apply commits one encoded entry (store.Encode...) through raft.
func (c *Coordinator) apply(entry []byte) error {
	return c.raft.Apply(entry, applyTimeout).Error()
}

// applyTimeout bounds how long an entry may wait to be taken by raft.
const applyTimeout = 10 * time.Second
