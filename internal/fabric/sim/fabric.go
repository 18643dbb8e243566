// Package sim is a pure-Go simulated RDMA fabric with the same shape and the
// same failure classes as the verbs provider, so the whole control plane, the
// matrix and the UI can run, and be tested, without an HCA.
//
// The model is shared, not exchanged: every Node built from an equal Config
// (in one process or many) knows every fault, and the initiator decides a
// test's outcome from both ends' fault state, which it can look up because
// QPInfo names the peer's node and device. The responder half is a no-op.
package sim

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// Config selects a preset, the random stream and the faults. Workers that
// should agree on one fabric must be given equal Configs.
type Config struct {
	Preset string  // "" = DefaultPreset
	Seed   int64   // same seed and same sequence of tests → same results
	Faults []Fault // from ParseFaults
	// TimeScale stretches modelled time into wall time: 0 returns at once,
	// 1 takes as long as the modelled hardware would. A wait never exceeds
	// the test's Timeout.
	TimeScale float64
	// Topology, when set, routes every test over its cables and switches
	// (each QP's UDP source port picks among equal paths), so cable and
	// switch faults hurt exactly the tests routed through them. Its nodes
	// and rails must be the fabric's.
	Topology Paths
	// HashSeed seeds the switches' ECMP hash. 0 is the topology's own
	// model, the one a link sweep plans by; any other value makes the
	// switches choose otherwise, as a vendor's hash would: what steering
	// must check by tracing (traces see the seeded hash too).
	HashSeed uint32
}

// Fabric is one simulated cluster. It is safe for concurrent use.
type Fabric struct {
	spec  PresetSpec
	seed  int64
	scale float64
	// faults is replaced whole by SetFaults, so tests already running see
	// either the old set or the new one, never half of each.
	faults atomic.Pointer[[]Fault]
	links  atomic.Pointer[linkFaults] // resolved from faults; nil = none
	topo   Paths
	seeded uint32 // Config.HashSeed
	live   probeSwitch
	counts portCounts // every port's hw_counters

	mu    sync.Mutex
	nodes map[string]*Node
}

// New checks cfg against its preset: a fault naming an HCA the preset lacks
// is an error here, since no node list can make it match.
func New(cfg Config) (*Fabric, error) {
	name := cfg.Preset
	if name == "" {
		name = DefaultPreset
	}
	spec, err := Preset(name)
	if err != nil {
		return nil, err
	}
	if !(cfg.TimeScale >= 0) || math.IsInf(cfg.TimeScale, 0) {
		return nil, fmt.Errorf("time scale %v out of range: use 0 (instant), 1 (real time) or another factor >= 0", cfg.TimeScale)
	}
	f := &Fabric{spec: spec, seed: cfg.Seed, scale: cfg.TimeScale, nodes: map[string]*Node{}, topo: cfg.Topology, seeded: cfg.HashSeed}
	if err := f.SetFaults(cfg.Faults); err != nil {
		return nil, err
	}
	return f, nil
}

// SetFaults replaces the faults while the fabric runs: the demo's way of
// breaking an HCA under a live mesh. A fault naming an HCA the preset
// lacks is refused and the old faults stay.
func (f *Fabric) SetFaults(faults []Fault) error {
	var errs []error
	for _, ft := range faults {
		if ft.Device != "" && f.spec.deviceIndex(ft.Device) < 0 {
			errs = append(errs, fmt.Errorf("fault %q: no HCA %q in preset %s (it has %s)",
				ft.Spec, ft.Device, f.spec.Name, f.spec.deviceRange()))
		}
	}
	lf, err := f.resolveLinks(faults)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	fs := append([]Fault(nil), faults...)
	f.links.Store(lf)
	f.faults.Store(&fs)
	return nil
}

func (f *Fabric) faultList() []Fault { return *f.faults.Load() }

// Preset is the node type of every node.
func (f *Fabric) Preset() PresetSpec { return f.spec }

// Faults returns a copy of the configured faults.
func (f *Fabric) Faults() []Fault { return append([]Fault(nil), f.faultList()...) }

// Effects merges every fault that applies to device on node.
func (f *Fabric) Effects(node, device string) Effects {
	var e Effects
	for _, ft := range f.faultList() {
		if ft.Matches(node, device) {
			e = merge(e, ft.Effects)
		}
	}
	return e
}

// Dead reports whether a fault kills node's worker. The fabric does nothing
// else about it: whoever runs the workers stops that one, so its peers see
// what they would in production (a lost member, peer-lost cells).
func (f *Fabric) Dead(node string) bool {
	for _, ft := range f.faultList() {
		if ft.Effects.Dead && ft.matchesNode(node) {
			return true
		}
	}
	return false
}

// Validate reports faults that match none of nodes: almost always a typo that
// would otherwise make a demo silently healthy.
func (f *Fabric) Validate(nodes []string) error { return CheckFaults(f.faultList(), nodes) }

// CheckFaults reports the faults in fs that match none of nodes (Validate;
// a cluster checks injected faults with it before applying them).
func CheckFaults(fs []Fault, nodes []string) error {
	var errs []error
	for _, ft := range fs {
		if ft.Link != nil {
			continue // checked against the topology by SetFaults
		}
		hit := false
		for _, n := range nodes {
			if ft.matchesNode(n) {
				hit = true
				break
			}
		}
		if !hit {
			errs = append(errs, fmt.Errorf("fault %q names no node of this fabric (%s)", ft.Spec, describeNodes(nodes)))
		}
	}
	return errors.Join(errs...)
}

func describeNodes(nodes []string) string {
	switch {
	case len(nodes) == 0:
		return "no nodes"
	case len(nodes) <= 4:
		return "nodes " + strings.Join(nodes, ", ")
	}
	return fmt.Sprintf("%d nodes: %s, %s, ..., %s", len(nodes), nodes[0], nodes[1], nodes[len(nodes)-1])
}

// Node returns the provider for one node; the same name yields the same
// Node, whose attempt counters keep a node's random streams moving forward.
func (f *Fabric) Node(name string) *Node {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.nodes[name]
	if !ok {
		n = &Node{fab: f, name: name, attempts: map[attemptKey]uint64{}, opens: map[string]uint64{}}
		f.nodes[name] = n
	}
	return n
}

// Node is the fabric as one worker sees it: the fabric.Fabric provider.
type Node struct {
	fab  *Fabric
	name string

	mu       sync.Mutex
	attempts map[attemptKey]uint64
	opens    map[string]uint64 // per device, so QPNs do not depend on rail interleaving
	gids     map[[2]int][2]string
}

// attemptKey counts tests per direction and rail, so a retest of the same
// pair draws fresh samples while the n-th test stays reproducible.
type attemptKey struct {
	dst  string
	rail int
}

// Name is the provider name published in the inventory.
func (n *Node) Name() string { return "sim" }

// NodeName is the node this provider stands for.
func (n *Node) NodeName() string { return n.name }

// Ports lists the node's HCA ports in rail order.
func (n *Node) Ports(ctx context.Context) ([]probe.Port, error) {
	if err := ctx.Err(); err != nil {
		return nil, cancelled("ibv_query_port", err)
	}
	s := n.fab.spec
	out := make([]probe.Port, 0, s.HCAs)
	for i := 0; i < s.HCAs; i++ {
		dev := s.Device(i)
		gid, typ := s.gidEntry(n.name, i, s.GIDIndex)
		p := probe.Port{
			Device:    dev,
			Port:      1,
			Rail:      i,
			LinkLayer: s.LinkLayer,
			State:     "ACTIVE",
			RateGbps:  s.RateGbps,
			MTU:       s.MTU,
			LID:       s.lid(n.name, i),
			GIDIndex:  s.GIDIndex,
			GID:       gid,
			GIDType:   typ,
			GIDReason: s.gidReason(n.name, i),
			Netdev:    s.netdev(i),
			IP:        ipv4(n.name, i).String(),
			Usable:    true,
		}
		if n.fab.Effects(n.name, dev).Down {
			e := portDown(s, n.name, dev)
			p.State = "DOWN"
			p.LID = 0 // the SM drops the LID of a port that left the subnet
			p.Usable = false
			p.UnusableWhy = e.Cause
			p.FailedChecks = []probe.Check{{
				Name:     "port-state",
				Status:   "fail",
				Evidence: fmt.Sprintf("/sys/class/infiniband/%s/ports/1/state: 1: DOWN, phys_state: 3: Disabled", dev),
				Cause:    e.Cause,
				Fix:      e.Fix,
			}}
		}
		out = append(out, p)
	}
	return out, nil
}

// Open builds the local half of a test on ep, failing where ibv_open_device,
// ibv_query_port or ibv_query_gid would.
func (n *Node) Open(ctx context.Context, ep probe.Endpoint, p probe.TestParams) (*Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, cancelled("ibv_open_device", err)
	}
	if err := p.Validate(); err != nil {
		return nil, &probe.Error{Class: probe.ClassInternal, Verb: "ibv_reg_mr", Errno: 22,
			Cause: "bad test parameters: " + err.Error(),
			Fix:   "fix the sweep parameters; the coordinator should have rejected them"}
	}
	s := n.fab.spec
	hca := s.deviceIndex(ep.Device)
	if hca < 0 {
		return nil, &probe.Error{Class: probe.ClassPortDown, Verb: "ibv_open_device", Errno: 19,
			Cause: fmt.Sprintf("no RDMA device %q on %s (this %s node has %s)", ep.Device, n.name, s.Name, s.deviceRange()),
			Fix:   "pick a device from the worker's inventory (`ibv_devices`, /sys/class/infiniband)"}
	}
	if ep.Port != 1 {
		return nil, &probe.Error{Class: probe.ClassPortDown, Verb: "ibv_query_port", Errno: 22,
			Cause: fmt.Sprintf("%s on %s has no port %d; it is a single-port HCA", ep.Device, n.name, ep.Port),
			Fix:   "use port 1 (`ibv_devinfo -d " + ep.Device + "` lists the ports)"}
	}
	if n.fab.Effects(n.name, ep.Device).Down {
		return nil, portDown(s, n.name, ep.Device)
	}
	gidIndex := ep.GIDIndex
	if gidIndex == -1 {
		gidIndex = s.GIDIndex
	}
	if gidIndex < 0 || gidIndex >= s.GIDTableLen {
		return nil, &probe.Error{Class: probe.ClassInvalidGID, Verb: "ibv_query_gid", Errno: 22,
			Cause: fmt.Sprintf("GID index %d is outside %s's table of %d entries on %s", gidIndex, ep.Device, s.GIDTableLen, n.name),
			Fix: fmt.Sprintf("use GID index %d (%s), or -1 to let the worker choose; `show_gids` lists the table",
				s.GIDIndex, s.GIDType)}
	}
	gid, typ := n.gid(hca, gidIndex)
	h := hash64(n.fab.seed, "open", n.name, ep.Device, n.nextOpen(ep.Device))
	qpn := uint32(0x100 + h%(0xffffff-0x100))
	var sport uint16
	switch {
	case s.roce() && ep.FlowLabel != 0:
		sport = probe.RoCEv2Sport(ep.FlowLabel, qpn, 0) // a label decides the port alone
	case s.roce():
		sport = rxeSport(qpn)
	}
	return &Session{
		node: n,
		ep:   ep,
		hca:  hca,
		info: probe.QPInfo{
			Node:      n.name,
			Device:    ep.Device,
			Port:      ep.Port,
			LinkLayer: s.LinkLayer,
			QPN:       qpn,
			UDPSport:  sport,
			PSN:       uint32(splitmix(h) & 0xffffff),
			LID:       s.lid(n.name, hca),
			GID:       gid,
			GIDIndex:  gidIndex,
			GIDType:   typ,
			MTU:       s.MTU,
			RKey:      uint32(splitmix(h + 1)),
			Addr:      0x7f00_0000_0000 | splitmix(h+2)&0xff_ffff_f000,
			Size:      max(p.LatencySize, p.BWSize),
		},
	}, nil
}

// gid is the preset's GID table entry, formatted once per node: Open runs
// for every test, and formatting an IPv6 address each time was most of it.
func (n *Node) gid(hca, index int) (string, string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := [2]int{hca, index}
	if e, ok := n.gids[k]; ok {
		return e[0], e[1]
	}
	gid, typ := n.fab.spec.gidEntry(n.name, hca, index)
	if n.gids == nil {
		n.gids = map[[2]int][2]string{}
	}
	n.gids[k] = [2]string{gid, typ}
	return gid, typ
}

func (n *Node) nextOpen(dev string) uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := n.opens[dev]
	n.opens[dev]++
	return c
}

func (n *Node) nextAttempt(dst string, rail int) uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := attemptKey{dst, rail}
	c := n.attempts[k]
	n.attempts[k]++
	return c
}

// hash64 mixes the seed with labels; FNV keeps it stable across processes
// and Go versions, which math/rand's global seeding would not.
//
// It hashes exactly the bytes fmt's "%d" and "\x00%v" would print, without
// fmt: a 1,024-node sweep opens 16.8 M sessions and fmt was most of Open.
func hash64(seed int64, parts ...any) uint64 {
	var buf [128]byte
	b := strconv.AppendInt(buf[:0], seed, 10)
	for _, p := range parts {
		b = append(b, 0)
		switch v := p.(type) {
		case string:
			b = append(b, v...)
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		case uint64:
			b = strconv.AppendUint(b, v, 10)
		default:
			b = fmt.Append(b, v)
		}
	}
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// splitmix spreads nearby inputs (h, h+1, ...) over the whole range.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
