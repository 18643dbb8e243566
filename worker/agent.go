// Package worker is the per-node agent: it joins gossip, publishes its HCA
// inventory, runs pair tasks for the coordinator and answers peers' probe
// sessions, all on a Fabric (real verbs or simulated).
package worker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/member"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/selffault"
	"github.com/rdmamesh/rdmamesh/internal/session"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/worker/live"
)

// Options configure an Agent.
type Options struct {
	Name            string
	Fabric          fabric.Fabric
	GossipBind      string // host:port, port 0 = any
	GossipAdvertise string
	Join            []string
	APIListen       string // host:port, port 0 = any
	APIAdvertise    string // what peers dial; empty = derived from the listener
	Labels          map[string]string
	Devices         []string // only these HCAs; empty = all
	LAN             bool     // memberlist LAN timers instead of single-host ones
	WAN             bool     // with LAN: WAN timers (gossip.profile wan)
	// Discover, when set, describes the host from outside the fabric (sysfs
	// scan, GID policy, preflight checks); the fabric's own port view fills
	// what discovery cannot see, such as the IB active MTU.
	Discover  func(ctx context.Context) ([]probe.Port, []probe.Check, error)
	Transport memberlist.Transport
	Logger    *slog.Logger
	Token     string // bearer token for the worker API; empty = open
	// Observability hooks; nil = off. OnTask sees every task result,
	// OnSession every responder outcome (nil error = served normally).
	OnTask    func(wire.TaskResult)
	OnSession func(error)
	Metrics   http.Handler // served at GET /metrics behind the token
	GossipKey []byte       // memberlist AES key (16, 24 or 32 bytes); empty = plaintext
	// HTTPTransport carries calls to peers' APIs; nil = pooled TCP. The
	// scale harness passes an in-process one.
	HTTPTransport http.RoundTripper
	// TLS serves the API over TLS (and may require client certificates);
	// ClientTLS dials peers' APIs with https. Nil: plain HTTP. A cluster
	// runs one or the other everywhere.
	TLS       *tls.Config
	ClientTLS *tls.Config
	// GossipTune adjusts the memberlist config (see member.Options.Tune).
	GossipTune func(*memberlist.Config)
	// AnswerTask, when set, answers a task (its encoded bytes) before the
	// agent decodes it, on POST /v1/tasks and on task streams alike: the
	// scale harness's and the chaos fleet's stand-in hosts answer at once
	// instead of running the test. It appends the encoded TaskResult to out,
	// as wire.ResultCodec(codes) writes it (the version the caller reads);
	// false leaves the task to the agent.
	AnswerTask func(task, out []byte, codes bool) ([]byte, bool)
	// Prober runs the always-on mesh's probes (worker/live); nil = no live
	// probing. A fabric that is also a fabric.Prober is the usual one.
	Prober fabric.Prober
	// Counters reads the ports' error and congestion counters, whose
	// deltas become each test's evidence; nil = none (fabric.CountersOf
	// for the simulated fabric, counters.FS over sysfs for verbs).
	Counters fabric.CounterReader
	// Tracer traces flows for POST /v1/trace; nil = probes from this host
	// (pathtrace). The simulated fabric traces over its own topology.
	Tracer FlowTracer
}

// Agent is a running worker.
type Agent struct {
	opts     Options
	log      *slog.Logger
	ml       *memberlist.Memberlist
	liveness *member.Liveness // does a peer whose API we cannot dial answer gossip?
	httpOnce sync.Once
	ln       net.Listener
	srv      *http.Server
	apiAddr  string
	sessions *session.Server
	streams  wire.StreamServer // the coordinator's task streams (api.go)
	client   *http.Client      // peers' APIs: health
	peers    session.Client    // peers' APIs: probe sessions

	mu  sync.Mutex
	inv probe.Inventory

	stopOnce sync.Once
	serveErr chan error

	healthStop context.CancelFunc // health.go: the loop that republishes on device events
	healthDone chan struct{}

	live      *live.Runner // live.go; nil = not probing
	liveAddrs []probe.LiveAddr
	liveEpoch map[string]int // device → its Reopened count when its probe port opened (live.go)
	counters  *counterBook   // counters.go; nil = no counters
	liveStop  context.CancelFunc
	liveDone  chan struct{}
}

// Start brings the agent up: inventory, API listener, then gossip, so that a
// peer that learns about us through gossip can already call the API.
func Start(ctx context.Context, o Options) (*Agent, error) {
	if o.Name == "" {
		return nil, errors.New("worker: name is empty")
	}
	if o.Fabric == nil {
		return nil, errors.New("worker: no fabric")
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	a := &Agent{opts: o, log: log.With("node", o.Name), client: &http.Client{Transport: peerTransport(o.HTTPTransport, o.ClientTLS)},
		serveErr: make(chan error, 1)}
	a.sessions, a.peers = a.sessionServer(), a.sessionClient()
	if _, err := a.refreshInventory(ctx); err != nil {
		return nil, err
	}
	a.counters = newCounterBook(o.Counters)
	for _, p := range a.Inventory().Ports {
		if p.Usable {
			a.counters.since(p.Device, p.Port) // the baseline the first test's delta starts from
		}
	}
	if o.Prober != nil {
		a.startLive(ctx)
	}
	up := false
	defer func() {
		if !up {
			a.stopLive() // a worker that never came up keeps no probe port open
		}
	}()
	ln, err := net.Listen("tcp", o.APIListen)
	if err != nil {
		return nil, fmt.Errorf("worker API listen %s: %w", o.APIListen, err)
	}
	ln = selffault.Listener(ln, "accepting a worker API connection")
	a.ln = ln
	a.apiAddr = member.Advertise(o.APIAdvertise, ln.Addr())
	a.inv.APIAddr = a.apiAddr
	// A refused TLS handshake is someone without the cluster's certificate:
	// the operator's log, not the process's stderr.
	a.srv = &http.Server{Handler: a.routes(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: apiIdleTimeout, TLSConfig: o.TLS,
		ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn)}
	go func() { a.serveErr <- member.Serve(a.srv, ln) }()

	cfg, err := member.Config(member.Options{Name: o.Name, Bind: o.GossipBind, Advertise: o.GossipAdvertise,
		LAN: o.LAN, WAN: o.WAN, Delegate: &delegate{a: a}, Logger: a.log, Transport: o.Transport, Key: o.GossipKey, Tune: o.GossipTune})
	if err != nil {
		a.stopHTTP()
		return nil, err
	}
	ml, err := memberlist.Create(cfg)
	if err != nil {
		a.stopHTTP()
		return nil, fmt.Errorf("gossip: %w", err)
	}
	a.ml = ml
	a.liveness = member.NewLiveness(ml)
	a.startHealth()
	if len(o.Join) > 0 {
		if _, err := ml.Join(o.Join); err != nil {
			// Seeds may come up after us; memberlist keeps no retry, so we
			// report and let the caller decide (the command retries).
			a.log.Warn("gossip join failed; will be found when a seed joins us", "seeds", o.Join, "err", err)
		}
	}
	a.log.Info("worker up", "api", a.apiAddr, "gossip", ml.LocalNode().Address(), "fabric", o.Fabric.Name(),
		"ports", len(a.Inventory().Ports))
	up = true
	return a, nil
}

// Join asks the seeds again; the command calls this until it succeeds.
func (a *Agent) Join(seeds []string) error {
	_, err := a.ml.Join(seeds)
	return err
}

// APIAddr is the worker API address peers dial.
func (a *Agent) APIAddr() string { return a.apiAddr }

// GossipAddr is the memberlist address others join.
func (a *Agent) GossipAddr() string { return a.ml.LocalNode().Address() }

// Members is the number of gossip members this agent sees, itself included.
func (a *Agent) Members() int { return a.ml.NumMembers() }

// Inventory returns a copy of the current inventory.
func (a *Agent) Inventory() probe.Inventory {
	a.mu.Lock()
	defer a.mu.Unlock()
	inv := a.inv
	inv.Ports = slices.Clone(a.inv.Ports)
	return inv
}

// refreshInventory scans again and, when anything the coordinator reads
// changed (or this is the first scan), takes a new generation; changed
// says so, and only then is it worth publishing.
func (a *Agent) refreshInventory(ctx context.Context) (changed bool, err error) {
	ports, err := a.opts.Fabric.Ports(ctx)
	if err != nil {
		return false, fmt.Errorf("worker: list HCA ports: %w", err)
	}
	var checks []probe.Check
	if a.opts.Discover != nil {
		found, hostChecks, err := a.opts.Discover(ctx)
		if err != nil {
			return false, fmt.Errorf("worker: discover HCAs: %w", err)
		}
		ports, checks = mergePorts(found, ports), hostChecks
	}
	if len(a.opts.Devices) > 0 {
		ports = slices.DeleteFunc(ports, func(p probe.Port) bool { return !slices.Contains(a.opts.Devices, p.Device) })
	}
	for i := range ports {
		ports[i].Rail = i
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inv.Generation != 0 && reflect.DeepEqual(a.inv.Ports, ports) && reflect.DeepEqual(a.inv.Checks, checks) &&
		reflect.DeepEqual(a.inv.Live, a.liveAddrs) {
		return false, nil
	}
	gen := a.inv.Generation + 1
	if a.inv.Generation == 0 {
		// A restarted worker must not reuse its predecessor's numbers: a
		// quick restart can slip past the coordinator's dead/alive
		// transition, and an equal generation would keep the old
		// inventory (seen in the lab after `--gid` changes).
		gen = uint64(time.Now().UnixNano())
	}
	a.inv = probe.Inventory{Version: probe.Version, Node: a.opts.Name, Generation: gen,
		APIAddr: a.apiAddr, Provider: a.opts.Fabric.Name(), Labels: a.opts.Labels, Ports: ports, Checks: checks, Live: a.liveAddrs}
	return true, nil
}

// Stop leaves gossip gracefully (others see "left", not "dead"), then stops
// the API and every open session.
func (a *Agent) Stop() { a.stop(true) }

// Kill drops off the network without a goodbye, like a crashed host; tests and
// the demo use it to model a dead worker.
func (a *Agent) Kill() { a.stop(false) }

func (a *Agent) stop(leave bool) {
	a.stopOnce.Do(func() {
		a.stopHealth()
		a.stopLive()
		if leave {
			if err := a.ml.Leave(2 * time.Second); err != nil {
				a.log.Debug("gossip leave", "err", err)
			}
		}
		if err := a.ml.Shutdown(); err != nil {
			a.log.Debug("gossip shutdown", "err", err)
		}
		a.stopHTTP()
		a.streams.Close()
		a.sessions.CloseAll()
		a.client.CloseIdleConnections()
	})
}

// CloseAPI stops serving the worker API while gossip goes on, as a worker
// behind a new firewall rule does: the in-process cluster's unreachable
// workers. Stop and Kill still stop the rest.
func (a *Agent) CloseAPI() {
	a.stopHTTP()
	a.streams.Close()
}

func (a *Agent) stopHTTP() {
	a.httpOnce.Do(func() {
		// Close, not Shutdown: a dead worker must stop answering at once,
		// and a clean stop has already drained sessions by the time it
		// gets here.
		_ = a.srv.Close()
		// Nothing else reads serveErr: an API server that died on its own
		// would otherwise leave no trace.
		if err := <-a.serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Warn("worker API stopped serving", "err", err)
		}
	})
}

// gossipAlive says whether a peer whose API this worker cannot dial is
// alive all the same: its test did not run, and the fault is the control
// network's.
func (a *Agent) gossipAlive(node string) bool { return a.liveness.Answers(node) }
