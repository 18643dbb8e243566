package cluster

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/topology"
)

// announced is what each HCA port of topo (the fabric as cabled) hears
// over LLDP, by topology HCA: the switch port at the far end of its
// cable, named as a Cumulus switch names it (swp33). An unplugged HCA
// hears nothing. The far ends of each pair in swapped (topology HCA
// names, node/device) are exchanged in the announcements only: the
// simulated tests still take topo's cables, as a switch announcing the
// wrong port would leave them.
func announced(topo *topology.Topology, swapped [][2]string, unplugged []int) (map[int]probe.Neighbor, error) {
	out := make(map[int]probe.Neighbor, len(topo.HCAs))
	byName := make(map[string]int, len(topo.HCAs))
	for h := range topo.HCAs {
		byName[topo.HCAName(h)] = h
		if slices.Contains(unplugged, h) {
			continue
		}
		c := topo.Cables[topo.HCACable(h)]
		far := c.B
		if far.IsHCA() {
			far = c.A
		}
		out[h] = probe.Neighbor{SystemName: topo.Switches[far.Switch].Name, PortID: "swp" + strconv.Itoa(far.Port),
			PortIDType: "interface-name", Source: "lldp-frame"}
	}
	for _, s := range swapped {
		a, okA := byName[s[0]]
		b, okB := byName[s[1]]
		if !okA || !okB {
			return nil, fmt.Errorf("swapped cables %s and %s: name two HCAs of the topology as node/device (e.g. %s)",
				s[0], s[1], topo.HCAName(0))
		}
		na, okA := out[a]
		nb, okB := out[b]
		if !okA || !okB {
			return nil, fmt.Errorf("swapped cables %s and %s: one of them is unplugged (missing=), so there is no announcement to swap", s[0], s[1])
		}
		out[a], out[b] = nb, na
	}
	return out, nil
}

// lldpDiscover is a simulated worker's host discovery: its ports as the
// fabric lists them, each with the neighbour its cable's switch port
// announces (nb, by topology HCA), or none heard on a port without one.
func lldpDiscover(topo *topology.Topology, nb map[int]probe.Neighbor, name string, node fabric.Fabric) func(context.Context) ([]probe.Port, []probe.Check, error) {
	return func(ctx context.Context) ([]probe.Port, []probe.Check, error) {
		ports, err := node.Ports(ctx)
		if err != nil {
			return nil, nil, err
		}
		for i := range ports {
			if h, ok := topo.HCA(name, ports[i].Rail); ok {
				n, heard := nb[h]
				if !heard {
					n = probe.Neighbor{Unknown: "no LLDP frame heard: the link is down", Source: "lldp-frame"}
				}
				ports[i].Neighbor = &n
			}
		}
		return ports, nil, nil
	}
}
