package coordinator

import (
	"fmt"
	"hash/fnv"
	"net/netip"
	"sync"

	"github.com/rdmamesh/rdmamesh/cabling"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/member"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/topology"
)

// Cabling judges the fabric's cables from what the coordinator holds:
// each live worker's HCA ports with the LLDP neighbour it heard, and the
// flows sweep traced (none when sweep is ""), against the topology when
// there is one (cabling.Check), else against the fabric's own majority
// (cabling.Survey). The coordinator reads no switch's neighbour table
// itself, so a cable between switches is judged by the traced paths
// alone (two consecutive hops name its switches, not its ports) or is
// no-evidence; CablingWithSwitches judges with tables an operator
// collected. ok is false when sweep names no sweep.
//
// The report is kept until the members, the sweep's paths or the
// topology change: the UI polls its view every few seconds, and a check
// of 16,384 nodes x 8 rails takes seconds. Callers must not modify it.
func (c *Coordinator) Cabling(sweep string) (rep *cabling.Report, src api.CablingSource, ok bool) {
	in, ok := c.cablingInputs(sweep)
	if !ok {
		return nil, src, false
	}
	key := cablingKey(in.nodes, sweep, len(in.flows), in.version)
	cc := &c.cabling
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.rep != nil && cc.key == key {
		return cc.rep, cc.src, true
	}
	rep, src = in.judge(sweep, nil)
	cc.key, cc.rep, cc.src = key, rep, src
	return rep, src, true
}

// cablingInputs is what a cabling report is judged from, read once.
type cablingInputs struct {
	nodes   []api.NodeInfo
	flows   []wire.FlowPath
	hops    *topology.Topology // names traced hop addresses
	plan    *topology.Topology // nil: survey
	version string
}

func (c *Coordinator) cablingInputs(sweep string) (in cablingInputs, ok bool) {
	if sweep != "" {
		if _, known := c.fsm.Info(sweep); !known {
			return in, false
		}
		in.flows, in.hops = c.fsm.Paths(sweep), c.SweepTopology(sweep)
	}
	in.plan, in.version = c.fsm.CurrentTopology()
	if in.plan == nil {
		in.plan, in.version = c.opts.Topology, c.topo.version
	}
	if in.hops == nil {
		in.hops = in.plan
	}
	in.nodes = c.reg.list()
	return in, true
}

// judge checks the inputs, with switches as the switches' own tables
// (nil: none read).
func (in cablingInputs) judge(sweep string, switches []cabling.SwitchPort) (*cabling.Report, api.CablingSource) {
	obs := observeCabling(in.nodes, in.hops, in.flows)
	obs.Switches = switches
	src := api.CablingSource{Sweep: sweep, Paths: len(obs.Paths), SwitchTables: switchTables(switches)}
	for _, h := range obs.Hosts {
		if h.Neighbor != nil {
			src.Neighbors++
		}
	}
	src.Workers = countNodes(obs.Hosts)
	if in.plan == nil {
		return cabling.Survey(obs), src
	}
	src.Plan = in.version
	return cabling.Check(in.plan, obs), src
}

// cablingCache is the last cabling report and what it was judged from.
type cablingCache struct {
	mu  sync.Mutex
	key uint64
	rep *cabling.Report
	src api.CablingSource
}

// cablingKey digests what a report depends on: each member's state and
// inventory generation (a new neighbour makes a new generation), the
// sweep and how many paths it committed, and the topology's version.
func cablingKey(nodes []api.NodeInfo, sweep string, paths int, topo string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d\x00%s\x00", sweep, paths, topo)
	for _, n := range nodes {
		var gen uint64
		if n.Inventory != nil {
			gen = n.Inventory.Generation
		}
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d\x00", n.Name, n.Role, n.State, gen)
	}
	return h.Sum64()
}

// noSwitchTables says, in the report's source, why cables between
// switches may have no evidence.
const noSwitchTables = "not read: no switch's neighbour table was given (rdmamesh cabling --switch-lldp FILE sends them), " +
	"so a cable between switches is judged from traced paths alone (its switches, not its ports) or is no-evidence"

// switchTables is the report's account of the switches' tables.
func switchTables(switches []cabling.SwitchPort) string {
	if len(switches) == 0 {
		return noSwitchTables
	}
	seen := map[string]bool{}
	for _, sp := range switches {
		seen[sp.Switch] = true
	}
	return fmt.Sprintf("read: %d entries from %d switches, given with the request", len(switches), len(seen))
}

func countNodes(hosts []cabling.HostPort) int {
	n, last := 0, ""
	for _, h := range hosts {
		if h.Node != last {
			n, last = n+1, h.Node
		}
	}
	return n
}

// observeCabling is what the members and a sweep's traced flows show of
// the cables. A worker gossip no longer sees (dead or left) reports
// nothing: its last inventory may predate a recabling, and the plan
// then calls its ports no-evidence rather than judging stale words.
// hops maps traced hop addresses to switch names (nil: no path is
// read, since an address alone names no switch).
func observeCabling(nodes []api.NodeInfo, hops *topology.Topology, flows []wire.FlowPath) cabling.Observed {
	var obs cabling.Observed
	for _, n := range nodes {
		if n.Role != member.RoleWorker || n.Inventory == nil || (n.State != "alive" && n.State != "suspect") {
			continue
		}
		for _, p := range n.Inventory.Ports {
			obs.Hosts = append(obs.Hosts, hostPort(n.Name, p))
		}
	}
	if hops == nil {
		return obs
	}
	for _, f := range flows {
		names, ok := hopNames(hops, f.Hops)
		if !ok {
			continue
		}
		p := cabling.Path{SrcNode: f.Src, SrcRail: f.Rail, DstNode: f.Dst, DstRail: f.Rail, Hops: names}
		if f.Back {
			p.SrcNode, p.DstNode = f.Dst, f.Src
		}
		obs.Paths = append(obs.Paths, p)
	}
	return obs
}

// hostPort is one inventory port as cabling reads it.
func hostPort(node string, p probe.Port) cabling.HostPort {
	hp := cabling.HostPort{Node: node, Device: p.Device, Rail: p.Rail, Down: p.State == "DOWN"}
	switch nb := p.Neighbor; {
	case nb == nil:
		hp.Why = "the worker looks for no LLDP neighbour (a simulated fabric, or no neighbour source on the node)"
	case nb.Unknown != "":
		hp.Why = nb.Unknown
	default:
		hp.Neighbor = &cabling.Neighbor{SystemName: nb.SystemName, PortID: nb.PortID, PortIDType: nb.PortIDType,
			PortDescription: nb.PortDescription, ChassisID: nb.ChassisID}
	}
	return hp
}

// hopNames names each traced hop's switch. A hop that did not answer,
// or answered from an address no switch has, is "" (unknown, never
// guessed); the destination answering for itself after the last switch
// is dropped, since the last hop must be the destination's leaf. ok is
// false when no switch answered.
func hopNames(t *topology.Topology, hops []string) (names []string, ok bool) {
	names = make([]string, 0, len(hops))
	for i, h := range hops {
		a, err := netip.ParseAddr(h)
		s, known := -1, false
		if err == nil {
			s, known = t.SwitchAt(a)
		}
		switch {
		case known:
			names, ok = append(names, t.Switches[s].Name), true
		case i == len(hops)-1 && ok && h != "":
		default:
			names = append(names, "")
		}
	}
	return names, ok
}
