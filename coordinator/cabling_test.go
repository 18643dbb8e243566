package coordinator

import (
	"strconv"
	"testing"

	"github.com/rdmamesh/rdmamesh/cabling"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/topology"
)

// members is every HCA of topo as live workers report it, each with the
// LLDP neighbour its planned cable's far end announces, but for swap:
// two HCAs whose neighbours are exchanged.
func members(t *testing.T, topo *topology.Topology, swap [2]string) []api.NodeInfo {
	t.Helper()
	byNode := map[string]*api.NodeInfo{}
	var order []string
	nb := map[string]*probe.Neighbor{}
	for h, x := range topo.HCAs {
		c := topo.Cables[topo.HCACable(h)]
		far := c.B
		if far.IsHCA() {
			far = c.A
		}
		nb[x.Node+"/"+x.Device] = &probe.Neighbor{SystemName: topo.Switches[far.Switch].Name,
			PortID: "swp" + strconv.Itoa(far.Port), PortIDType: "interface-name", Source: "lldp-frame"}
	}
	nb[swap[0]], nb[swap[1]] = nb[swap[1]], nb[swap[0]]
	for _, x := range topo.HCAs {
		n := byNode[x.Node]
		if n == nil {
			n = &api.NodeInfo{Name: x.Node, Role: "worker", State: "alive", Inventory: &probe.Inventory{Node: x.Node}}
			byNode[x.Node] = n
			order = append(order, x.Node)
		}
		n.Inventory.Ports = append(n.Inventory.Ports, probe.Port{Device: x.Device, Port: 1, Rail: x.Rail, State: "ACTIVE",
			Neighbor: nb[x.Node+"/"+x.Device]})
	}
	out := make([]api.NodeInfo, 0, len(order))
	for _, name := range order {
		out = append(out, *byNode[name])
	}
	return out
}

func tree(t *testing.T) *topology.Topology {
	t.Helper()
	_, topo, err := topology.GenerateFatTree("nodes=4,rails=2,leaf=2,spines=1,addrs=10.255.0.0/24")
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// Two HCAs of one node with each other's neighbours are swapped, every
// other HCA port is ok, and no port is judged without evidence but the
// cables between switches, whose tables nobody read.
func TestCablingSwappedFromInventory(t *testing.T) {
	topo := tree(t)
	a, b := topo.HCAs[0], topo.HCAs[1]
	if a.Node != b.Node {
		t.Fatalf("the first two HCAs are on %s and %s; the test wants one node's", a.Node, b.Node)
	}
	rep := cabling.Check(topo, observeCabling(members(t, topo, [2]string{a.Node + "/" + a.Device, b.Node + "/" + b.Device}), topo, nil))
	for _, f := range rep.Ports {
		switch {
		case f.End == a.Node+"/"+a.Device || f.End == b.Node+"/"+b.Device:
			if f.Verdict != cabling.Swapped {
				t.Errorf("%s: %s, want swapped", f.End, f.Verdict)
			}
		case f.Node != "" && f.Verdict != cabling.OK:
			t.Errorf("%s: %s (%s), want ok", f.End, f.Verdict, f.Detail)
		case f.Node == "" && f.Verdict != cabling.NoEvidence:
			t.Errorf("switch cable %s: %s, want no-evidence", f.End, f.Verdict)
		}
	}
}

// A port nobody looked at, one whose LLDP listener heard nothing, and a
// down port become host ports without a neighbour, saying why; a dead
// worker's stale inventory is left out.
func TestCablingHostPorts(t *testing.T) {
	inv := &probe.Inventory{Ports: []probe.Port{
		{Device: "mlx5_0", Rail: 0, State: "ACTIVE"},
		{Device: "mlx5_1", Rail: 1, State: "ACTIVE", Neighbor: &probe.Neighbor{Unknown: "no LLDP frame in 35s on eth1"}},
		{Device: "mlx5_2", Rail: 2, State: "DOWN"},
	}}
	nodes := []api.NodeInfo{
		{Name: "n1", Role: "worker", State: "alive", Inventory: inv},
		{Name: "n2", Role: "worker", State: "dead", Inventory: inv},
		{Name: "c1", Role: "coordinator", State: "alive"},
	}
	obs := observeCabling(nodes, nil, []wire.FlowPath{{Src: "n1", Dst: "n2", Hops: []string{"10.0.0.1"}}})
	if len(obs.Hosts) != 3 || len(obs.Paths) != 0 {
		t.Fatalf("observed %+v: want n1's 3 ports and no path (no topology names a hop)", obs)
	}
	if h := obs.Hosts[0]; h.Neighbor != nil || h.Why == "" {
		t.Errorf("a port nobody looked at: %+v", h)
	}
	if h := obs.Hosts[1]; h.Neighbor != nil || h.Why != "no LLDP frame in 35s on eth1" {
		t.Errorf("a port that heard nothing: %+v", h)
	}
	if h := obs.Hosts[2]; !h.Down {
		t.Errorf("a down port: %+v", h)
	}
}

// Traced hops become switch names: a silent hop and an address no switch
// has are unknown, the destination answering for itself is dropped, and
// a responder's flow runs from its target.
func TestCablingPathsFromHops(t *testing.T) {
	topo := tree(t)
	addr := func(name string) string {
		s, _ := topo.Switch(name)
		return topo.Switches[s].Addrs[0]
	}
	var leaves []string
	for _, s := range topo.Switches {
		if s.Tier == topology.Leaf && s.Plane == 0 {
			leaves = append(leaves, s.Name)
		}
	}
	leaf0, leaf1 := leaves[0], leaves[1]
	flows := []wire.FlowPath{
		{Src: "a", Dst: "b", Rail: 0, Hops: []string{addr(leaf0), "", addr(leaf1), "10.78.0.2"}},
		{Src: "a", Dst: "b", Rail: 0, Back: true, Hops: []string{addr(leaf1), "192.0.2.1", addr(leaf0)}},
		{Src: "a", Dst: "b", Rail: 0, Why: "not traced: timeout"},
	}
	obs := observeCabling(nil, topo, flows)
	if len(obs.Paths) != 2 {
		t.Fatalf("paths %+v, want the two traced", obs.Paths)
	}
	if p := obs.Paths[0]; p.SrcNode != "a" || len(p.Hops) != 3 || p.Hops[0] != leaf0 || p.Hops[1] != "" || p.Hops[2] != leaf1 {
		t.Errorf("data flow %+v", p)
	}
	if p := obs.Paths[1]; p.SrcNode != "b" || p.DstNode != "a" || len(p.Hops) != 3 || p.Hops[1] != "" || p.Hops[2] != leaf0 {
		t.Errorf("responder's flow %+v", p)
	}
}

// The kept report is judged again when a member's inventory, its state,
// the sweep, its paths or the topology change, and only then.
func TestCablingKey(t *testing.T) {
	nodes := members(t, tree(t), [2]string{})
	base := cablingKey(nodes, "s1", 4, "v1")
	if cablingKey(nodes, "s1", 4, "v1") != base {
		t.Fatal("the same inputs give another key")
	}
	changed := func(what string, k uint64) {
		if k == base {
			t.Errorf("%s: same key", what)
		}
	}
	changed("sweep", cablingKey(nodes, "s2", 4, "v1"))
	changed("paths", cablingKey(nodes, "s1", 5, "v1"))
	changed("topology", cablingKey(nodes, "s1", 4, "v2"))
	inv := *nodes[1].Inventory
	inv.Generation++
	nodes[1].Inventory = &inv
	changed("an inventory", cablingKey(nodes, "s1", 4, "v1"))
	nodes[1].State = "dead"
	changed("a state", cablingKey(nodes, "s1", 4, "v1"))
}
