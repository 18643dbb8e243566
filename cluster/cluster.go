// Package cluster starts a whole rdmamesh deployment inside one process:
// a coordinator and N workers on the simulated fabric, over real loopback
// gossip and HTTP. `rdmamesh demo` and the end-to-end tests both use it.
package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/coordinator"
	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
	"github.com/rdmamesh/rdmamesh/internal/member"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/topology"
	"github.com/rdmamesh/rdmamesh/worker"
)

// Options describe the simulated cluster.
type Options struct {
	Nodes       int
	Rails       int // use the preset's first Rails HCAs; 0 = all
	Preset      string
	Seed        int64
	Faults      []string
	TimeScale   float64
	Listen      string // web UI/API address; "127.0.0.1:0" picks a port
	DataDir     string
	Mode        string
	Params      probe.TestParams
	PairTimeout time.Duration
	Logger      *slog.Logger
	// Coordinators > 1 runs a raft cluster of that many replicas on
	// in-memory raft transports, each with its own web server.
	Coordinators int
	// Token turns on API auth and session tickets everywhere; GossipKey
	// encrypts gossip.
	Token     string
	GossipKey []byte
	// TLS serves every API over TLS (client certificates required when it
	// says so) and ClientTLS dials them; set both or neither. Raft stays on
	// in-memory transports.
	TLS       *tls.Config
	ClientTLS *tls.Config
	// Sweep holds the coordinators' sweep defaults, profiles and baseline.
	Sweep coordinator.SweepDefaults
	// Version and Commit label rdmamesh_build_info on /metrics, as the
	// coordinator command's do.
	Version, Commit string
	// Live runs the always-on mesh: every simulated worker probes through
	// the sim fabric's probe ports, the leader plans and judges.
	Live coordinator.LiveOptions
	// Unreachable names workers whose API stops answering once they have
	// registered, while their gossip runs on: a worker behind a new
	// firewall rule.
	Unreachable []string
	// Topology routes the simulated tests over its cables and switches
	// (cable and switch faults become possible) and gives the coordinators
	// link localization; its nodes must be the cluster's (NodeName).
	Topology *topology.Topology
	// Miscabled are the ways the simulated fabric's cables differ from
	// Topology (topology.Miscable's specs: swap=, move=, uplink=,
	// missing=). The sim routes, traces and announces LLDP over the
	// fabric as cabled, an unplugged HCA's port is down; the coordinators
	// keep Topology as the plan, so their cabling check has real faults
	// to find.
	Miscabled []string
	// SwappedCables are pairs of HCAs (node/device) whose switches
	// announce each other's ports over LLDP while the cables stay as
	// cabled (lldp.go): a wrong announcement, not a wrong cable (for that
	// write swap= in Miscabled). With a Topology every simulated port
	// hears its cable's switch port.
	SwappedCables [][2]string
	// HashSeed makes the simulated switches' ECMP hash differ from the
	// topology's model (sim.Config.HashSeed); 0 keeps the model's.
	HashSeed uint32
	// LossProbes: hop loss on the traced flows of bad cells
	// (coordinator.Options.LossProbes); 0 = none.
	LossProbes int
}

// Cluster is a running in-process deployment.
type Cluster struct {
	Coord   *coordinator.Coordinator // the first replica
	URL     string                   // base URL of the first replica's UI and API
	Coords  []*Replica
	names   []string
	seeds   []string // the replicas' gossip addresses
	workers map[string]*worker.Agent
	dead    []string
	log     *slog.Logger
	stop    sync.Once
	fab     *sim.Fabric
	base    []sim.Fault // the faults the cluster started with
}

// Replica is one coordinator with its web server and raft transport.
type Replica struct {
	*coordinator.Coordinator
	URL    string
	trans  *raft.InmemTransport
	srv    *http.Server
	served chan error
	down   bool
	// The web server's view preparer, stopped with the replica.
	stopPrep context.CancelFunc
	prepared chan struct{}
}

// NodeName is the demo's name for node i (0-based): node-01 … node-16, with
// the width growing for large clusters so names sort in numeric order.
func NodeName(i, n int) string {
	w := max(2, len(fmt.Sprint(n)))
	return fmt.Sprintf("node-%0*d", w, i+1)
}

// Start builds the sim fabric, the coordinator, the web server and the
// workers, and waits until the coordinator knows every worker's inventory.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	if o.Nodes < 2 {
		return nil, fmt.Errorf("nodes: %d; a sweep needs at least 2", o.Nodes)
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	faults, err := sim.ParseFaults(o.Faults)
	if err != nil {
		return nil, err
	}
	cabled, unplugged, err := asCabled(o)
	if err != nil {
		return nil, err
	}
	faults = append(faults, unplugged...)
	names := make([]string, o.Nodes)
	for i := range names {
		names[i] = NodeName(i, o.Nodes)
	}
	cfg := sim.Config{Preset: o.Preset, Seed: o.Seed, Faults: faults, TimeScale: o.TimeScale, HashSeed: o.HashSeed}
	if o.Topology != nil {
		rails := o.Rails
		if rails == 0 {
			if spec, err := presetOf(o); err == nil {
				rails = spec.HCAs
			}
		}
		if err := coversNodes(o.Topology, names, rails); err != nil {
			return nil, err
		}
		cfg.Topology = cabled.topo // only when set: a nil pointer in the interface is not nil
	}
	fab, err := sim.New(cfg)
	if err != nil {
		return nil, err
	}
	c := &Cluster{workers: map[string]*worker.Agent{}, log: log, fab: fab, base: faults, names: names}
	if err := fab.Validate(c.names); err != nil {
		return nil, err
	}
	if o.Live.Enabled {
		devs, err := firstDevices(ctx, fabric.Adapt(fab.Node(c.names[0])), o.Rails)
		if err != nil {
			return nil, err
		}
		o.Live = shareLive(o.Live, o.Nodes, len(devs), log)
	}
	if err := c.startCoordinators(o); err != nil {
		c.Stop()
		return nil, err
	}
	c.Coord, c.URL = c.Coords[0].Coordinator, c.Coords[0].URL
	var seeds []string
	for _, r := range c.Coords {
		seeds = append(seeds, r.GossipAddr())
	}
	c.seeds = seeds
	var lldp map[int]probe.Neighbor
	switch {
	case o.Topology != nil:
		lldp, err = announced(cabled.topo, o.SwappedCables, cabled.unplugged)
	case len(o.SwappedCables) > 0:
		err = fmt.Errorf("swapped cables %v: a fabric without a topology has no cables to swap (give a fat tree or a plan)", o.SwappedCables)
	}
	if err != nil {
		c.Stop()
		return nil, err
	}
	for _, name := range c.names {
		node := fabric.Adapt(fab.Node(name))
		devices, err := firstDevices(ctx, node, o.Rails)
		if err != nil {
			c.Stop()
			return nil, err
		}
		var discover func(context.Context) ([]probe.Port, []probe.Check, error)
		if lldp != nil {
			discover = lldpDiscover(cabled.topo, lldp, name, node)
		}
		a, err := worker.Start(ctx, worker.Options{Name: name, Fabric: node, GossipBind: "127.0.0.1:0", Discover: discover,
			Join: seeds, APIListen: "127.0.0.1:0", Devices: devices, Logger: log, Token: o.Token, GossipKey: o.GossipKey,
			TLS: o.TLS, ClientTLS: o.ClientTLS, GossipTune: gossipTune(o.Nodes), Prober: liveProber(o, fab.Node(name)), Counters: fab.Node(name),
			Tracer: fab.Node(name),
			Labels: map[string]string{"group": fmt.Sprintf("leaf-%02d", len(c.workers)/8+1)}})
		if err != nil {
			c.Stop()
			return nil, fmt.Errorf("worker %s: %w", name, err)
		}
		c.workers[name] = a
		if fab.Dead(name) {
			c.dead = append(c.dead, name)
		}
	}
	if err := c.WaitReady(ctx, o.Nodes); err != nil {
		c.Stop()
		return nil, err
	}
	// Dead workers join first and die after, like a host that crashed after
	// the scheduler had already counted it in.
	for _, name := range c.dead {
		c.workers[name].Kill()
	}
	for _, name := range o.Unreachable {
		w, ok := c.workers[name]
		if !ok {
			c.Stop()
			return nil, fmt.Errorf("unreachable worker %q: no such node (%s..%s)", name, c.names[0], c.names[len(c.names)-1])
		}
		w.CloseAPI()
	}
	return c, nil
}

// liveProber is the worker's prober when the cluster runs the live mesh.
func liveProber(o Options, n *sim.Node) fabric.Prober {
	if !o.Live.Enabled {
		return nil
	}
	return n
}

func firstDevices(ctx context.Context, f fabric.Fabric, rails int) ([]string, error) {
	ports, err := f.Ports(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case rails > len(ports):
		return nil, fmt.Errorf("rails: %d asked, the preset has %d HCAs", rails, len(ports))
	case rails <= 0:
		rails = len(ports)
	}
	out := make([]string, 0, rails)
	for _, p := range ports[:rails] {
		out = append(out, p.Device)
	}
	return out, nil
}

// WaitReady waits until there is a leader and every live replica holds n
// workers' inventories.
func (c *Cluster) WaitReady(ctx context.Context, n int) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	start, nagged := time.Now(), time.Now()
	for {
		ready := n
		for _, r := range c.Coords {
			if r.down {
				continue
			}
			have := 0
			for _, node := range r.Nodes() {
				if node.Role == "worker" && node.Inventory != nil {
					have++
				}
			}
			ready = min(ready, have)
		}
		if ready >= n && c.Leader() != nil {
			return nil
		}
		if time.Since(nagged) > 3*time.Second {
			nagged = time.Now()
			c.rejoinLoners()
			c.log.Warn("cluster still starting", "workers_registered", ready, "of", n, "leader", c.Leader() != nil,
				"waited", time.Since(start).Round(time.Second))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d workers to register (have %d): %w", n, ready, ctx.Err())
		case <-tick.C:
		}
	}
}

// rejoinLoners asks the seeds again for every worker that knows nobody:
// a join that timed out on a loaded machine is not retried by memberlist,
// and such a worker would never register (the command retries the same way,
// keepJoining).
func (c *Cluster) rejoinLoners() {
	for _, name := range c.names {
		if a := c.workers[name]; a != nil && a.Members() < 2 {
			if err := a.Join(c.seeds); err != nil {
				c.log.Warn("gossip rejoin failed", "node", name, "err", err)
			}
		}
	}
}

// Names lists the node names in order.
func (c *Cluster) Names() []string { return c.names }

// Worker returns a node's agent.
func (c *Cluster) Worker(name string) *worker.Agent { return c.workers[name] }

// Stop tears everything down: workers, web server, coordinator.
func (c *Cluster) Stop() {
	c.stop.Do(func() {
		// Together: each goodbye waits for its gossip broadcast (up to a
		// second with relaxed timers), so one after another a 128-node
		// demo took three minutes to exit.
		var wg sync.WaitGroup
		for _, a := range c.workers {
			wg.Go(a.Stop)
		}
		wg.Wait()
		for _, r := range c.Coords {
			c.stopReplica(r)
		}
	})
}

// sharedProbeBudget is the probes a second all the in-process workers
// may send together: a few percent of one core for the simulated sends,
// answers and trackers.
const sharedProbeBudget = 8000

// shareLive scales the probe rates down when every worker of the cluster
// shares this process: at the product's 50 probes/s per HCA a 512 x 2
// demo would send 51,200 a second from one process, which starves gossip
// and the sweep on a small machine (real workers each have a host). The
// coverage period grows instead; it is logged, and a period bound, which
// the plan could no longer meet, is dropped.
func shareLive(lo coordinator.LiveOptions, nodes, rails int, log *slog.Logger) coordinator.LiveOptions {
	p := lo.Params.WithDefaults()
	total := float64(nodes*rails) * p.RatePerHCA
	if total <= sharedProbeBudget {
		return lo
	}
	f := sharedProbeBudget / total
	p.RatePerHCA *= f
	p.GroupRate *= f
	p.Period = 0
	log.Info("live probing scaled to the shared process", "nodes", nodes, "rails", rails,
		"rate_per_hca", fmt.Sprintf("%.2f", p.RatePerHCA), "group_rate", fmt.Sprintf("%.3f", p.GroupRate),
		"probes_per_second", sharedProbeBudget)
	lo.Params = p
	return lo
}

// gossipTune relaxes the in-process workers' gossip once there are enough
// of them to crowd this host's cores (member.SharedHost); a small demo
// keeps the fast local timers, so it converges in a blink.
func gossipTune(nodes int) func(*memberlist.Config) {
	if nodes <= 64 {
		return nil
	}
	return member.SharedHost
}

// coversNodes checks that the topology cables every node's rails: a test
// between HCAs it lacks could not be routed, and a sweep would quietly
// localize nothing there.
func coversNodes(t *topology.Topology, names []string, rails int) error {
	for _, n := range names {
		for r := range max(rails, 1) {
			if _, ok := t.HCA(n, r); !ok {
				return fmt.Errorf("topology: %s rail %d has no cable in the topology; its nodes must be the demo's (%s ... %s) with %d rails each",
					n, r, names[0], names[len(names)-1], rails)
			}
		}
	}
	return nil
}
