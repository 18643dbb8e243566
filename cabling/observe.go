package cabling

import (
	"strconv"

	"github.com/rdmamesh/rdmamesh/topology"
)

// Observe is what a fabric cabled exactly as t would show: every HCA's
// neighbour, and both ends of every cable between switches in the
// switches' tables. portName writes a switch's port as the switch
// names it; nil writes the bare number, as ibnetdiscover does. On
// InfiniBand, t parsed from ibnetdiscover's output is the fabric as it
// is, so Observe(t, nil) is the evidence to Check against a plan.
func Observe(t *topology.Topology, portName func(sw topology.Switch, port int) string) Observed {
	if portName == nil {
		portName = func(_ topology.Switch, port int) string { return strconv.Itoa(port) }
	}
	nb := func(e topology.End) Neighbor {
		s := t.Switches[e.Switch]
		return Neighbor{SystemName: s.Name, PortID: portName(s, e.Port), PortIDType: "interface-name", ChassisID: s.GUID}
	}
	var obs Observed
	obs.Hosts = make([]HostPort, 0, len(t.HCAs))
	for h, x := range t.HCAs {
		c := t.Cables[t.HCACable(h)]
		far := c.B
		if far.IsHCA() {
			far = c.A
		}
		n := nb(far)
		obs.Hosts = append(obs.Hosts, HostPort{Node: x.Node, Device: x.Device, Rail: x.Rail, Neighbor: &n})
	}
	obs.Switches = make([]SwitchPort, 0, 2*(len(t.Cables)-len(t.HCAs)))
	for _, c := range t.Cables {
		if c.A.IsHCA() || c.B.IsHCA() {
			continue
		}
		for _, ends := range [][2]topology.End{{c.A, c.B}, {c.B, c.A}} {
			near := t.Switches[ends[0].Switch]
			obs.Switches = append(obs.Switches, SwitchPort{Switch: near.Name, Port: portName(near, ends[0].Port), Neighbor: nb(ends[1])})
		}
	}
	return obs
}
