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
// (cabling.Survey). No switch's neighbour table is read yet, so a cable
// between switches is judged by the traced paths alone (two consecutive
// hops name its switches, not its ports) or is no-evidence. ok is false
// when sweep names no sweep.
//
// The report is kept until the members, the sweep's paths or the
// topology change: the UI polls its view every few seconds, and a check
// of 16,384 nodes x 8 rails takes seconds. Callers must not modify it.
func (c *Coordinator) Cabling(sweep string) (rep *cabling.Report, src api.CablingSource, ok bool) {
	var flows []wire.FlowPath
	var hopTopo *topology.Topology
	if sweep != "" {
		if _, known := c.fsm.Info(sweep); !known {
			return nil, src, false
		}
		flows, hopTopo = c.fsm.Paths(sweep), c.SweepTopology(sweep)
	}
	plan, version := c.fsm.CurrentTopology()
	if plan == nil {
		plan, version = c.opts.Topology, c.topo.version
	}
	if hopTopo == nil {
		hopTopo = plan
	}
	nodes := c.reg.list()
	key := cablingKey(nodes, sweep, len(flows), version)
	cc := &c.cabling
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.rep != nil && cc.key == key {
		return cc.rep, cc.src, true
	}
	obs := observeCabling(nodes, hopTopo, flows)
	src = api.CablingSource{Sweep: sweep, Paths: len(obs.Paths), SwitchTables: noSwitchTables}
	for _, h := range obs.Hosts {
		if h.Neighbor != nil {
			src.Neighbors++
		}
	}
	src.Workers = countNodes(obs.Hosts)
	if plan == nil {
		rep = cabling.Survey(obs)
	} else {
		rep, src.Plan = cabling.Check(plan, obs), version
	}
	cc.key, cc.rep, cc.src = key, rep, src
	return rep, src, true
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
// switches have no evidence.
const noSwitchTables = "not read: rdmamesh reads no switch's neighbour table yet, so a cable between switches is judged " +
	"from traced paths alone (its switches, not its ports) or is no-evidence"

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
