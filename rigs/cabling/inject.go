package cabling

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/rdmamesh/rdmamesh/cabling"
	"github.com/rdmamesh/rdmamesh/topology"
)

// Kinds are the miscablings every faulted run injects, one of each.
var Kinds = []string{"swapped", "wrong leaf", "wrong rail", "HCA on a wrong port", "uplink on a wrong spine port", "HCA cable missing", "uplink missing"}

// change is an observation under construction: the clean one's slices
// copied, so a run changes only its own.
type change struct {
	f     *fabric
	obs   cabling.Observed
	drop  map[int]bool
	want  map[string]cabling.Verdict
	nodes map[string]bool // used by a fault already: faults must not meet
	used  map[int]bool    // leaves and uplinks used likewise
	spare map[int]int     // spare ports handed out per switch
}

// inject draws one fault of each kind on distinct nodes and cables and
// returns the observation and the finding each should give, by end.
func (f *fabric) inject(rng *rand.Rand) (cabling.Observed, map[string]cabling.Verdict, error) {
	c := &change{f: f, drop: map[int]bool{}, want: map[string]cabling.Verdict{}, nodes: map[string]bool{}, used: map[int]bool{}, spare: map[int]int{}}
	c.obs.Hosts = slices.Clone(f.clean.Hosts)
	c.obs.Switches = slices.Clone(f.clean.Switches)
	t := f.topo
	if len(f.leaves) < 2 || len(f.leaves[0]) < 2 {
		return c.obs, nil, fmt.Errorf("the tree needs 2 rails and 2 leaves a rail to draw every fault")
	}
	// swapped: two HCAs of one node trade cables.
	n, r1 := c.hca(rng)
	r2 := (r1 + 1 + rng.IntN(len(f.leaves)-1)) % len(f.leaves)
	a, b := &c.obs.Hosts[f.host[hostKey(n, r1)]], &c.obs.Hosts[f.host[hostKey(n, r2)]]
	a.Neighbor, b.Neighbor = b.Neighbor, a.Neighbor
	c.want[t.HCAName(c.hcaIndex(n, r1))], c.want[t.HCAName(c.hcaIndex(n, r2))] = cabling.Swapped, cabling.Swapped

	// wrong leaf, wrong rail, wrong port: into a spare port of a leaf of
	// the same plane, of another plane, of its own leaf.
	for _, v := range []cabling.Verdict{cabling.WrongLeaf, cabling.WrongRail, cabling.WrongPort} {
		n, r := c.hca(rng)
		own := t.LeafOf(c.hcaIndex(n, r))
		leaf := own
		switch v {
		case cabling.WrongLeaf:
			for leaf == own {
				leaf = f.leaves[r][rng.IntN(len(f.leaves[r]))]
			}
		case cabling.WrongRail:
			other := (r + 1 + rng.IntN(len(f.leaves)-1)) % len(f.leaves)
			leaf = f.leaves[other][rng.IntN(len(f.leaves[other]))]
		}
		c.obs.Hosts[f.host[hostKey(n, r)]].Neighbor = c.neighbor(leaf, c.sparePort(leaf))
		c.want[t.HCAName(c.hcaIndex(n, r))] = v
	}

	// HCA cable missing: the port's link is down, nothing heard.
	n, r := c.hca(rng)
	h := &c.obs.Hosts[f.host[hostKey(n, r)]]
	h.Neighbor, h.Down, h.Why = nil, true, "link down"
	c.want[t.HCAName(c.hcaIndex(n, r))] = cabling.Missing

	// uplink on a wrong spine port: its spine end moves to a spare port.
	leaf, spine := c.uplink(rng)
	p := c.sparePort(spine.Switch)
	c.obs.Switches[c.lineOf(leaf)].Neighbor = *c.neighbor(spine.Switch, p)
	sl := &c.obs.Switches[c.lineOf(spine)]
	sl.Port = f.name(t.Switches[spine.Switch], p)
	c.want[t.EndName(leaf)] = cabling.WrongPort

	// uplink missing: neither switch lists it.
	leaf, spine = c.uplink(rng)
	c.drop[c.lineOf(leaf)], c.drop[c.lineOf(spine)] = true, true
	c.want[t.EndName(leaf)] = cabling.Missing

	if len(c.drop) > 0 {
		kept := c.obs.Switches[:0]
		for i, l := range c.obs.Switches {
			if !c.drop[i] {
				kept = append(kept, l)
			}
		}
		c.obs.Switches = kept
	}
	return c.obs, c.want, nil
}

// hca draws a node no fault has used, and a rail of it.
func (c *change) hca(rng *rand.Rand) (string, int) {
	for {
		h := c.f.topo.HCAs[rng.IntN(len(c.f.topo.HCAs))]
		if !c.nodes[h.Node] {
			c.nodes[h.Node] = true
			return h.Node, h.Rail
		}
	}
}

func (c *change) hcaIndex(node string, rail int) int {
	h, _ := c.f.topo.HCA(node, rail)
	return h
}

// uplink draws a leaf-to-spine cable of a leaf no fault has used: its
// leaf end and its spine end.
func (c *change) uplink(rng *rand.Rand) (topology.End, topology.End) {
	for {
		cab := c.f.topo.Cables[c.f.uplinks[rng.IntN(len(c.f.uplinks))]]
		if !c.used[cab.A.Switch] {
			c.used[cab.A.Switch] = true
			return cab.A, cab.B
		}
	}
}

func (c *change) sparePort(sw int) int {
	p := c.f.spare[sw] + c.spare[sw]
	c.spare[sw]++
	return p
}

func (c *change) lineOf(e topology.End) int {
	return c.f.line[c.f.topo.Switches[e.Switch].Name+" "+c.f.name(c.f.topo.Switches[e.Switch], e.Port)]
}

func (c *change) neighbor(sw, port int) *cabling.Neighbor {
	s := c.f.topo.Switches[sw]
	return &cabling.Neighbor{SystemName: s.Name, PortID: c.f.name(s, port), PortIDType: "interface-name"}
}
