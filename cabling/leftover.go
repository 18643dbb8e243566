package cabling

import "fmt"

type pairKey [2]swPort

func pairOf(a, b swPort) pairKey {
	if b.sw < a.sw || b.sw == a.sw && b.port < a.port {
		a, b = b, a
	}
	return pairKey{a, b}
}

// leftoverEntries reports the switch-table lines that no planned cable
// accounts for: each cable once, though both its ends may list it.
// Lines about hosts are left to the hosts' own reports, which say which
// HCA they are; a switch's view of a host names only a MAC or netdev.
func (c *checker) leftoverEntries() {
	known := map[pairKey]bool{}
	hostPorts := map[swPort]bool{}
	for i := range c.items {
		it := &c.items[i]
		if it.hca >= 0 {
			hostPorts[it.expected] = true
			if it.found.seen && it.found.at.sw >= 0 {
				hostPorts[it.found.at] = true
			}
			continue
		}
		known[pairOf(it.anchor, it.expected)] = true
		if it.found.seen && it.found.at.sw >= 0 {
			known[pairOf(it.anchor, it.found.at)] = true
		}
	}
	for _, e := range c.entries {
		if _, host := c.nodes[e.nbName]; host || hostPorts[e.local] {
			continue
		}
		f := Finding{Verdict: Unexpected, Rail: -1, Evidence: EvidenceSwitch}
		switch {
		case e.local.sw < 0:
			f.Verdict, f.End, f.Found = UnknownSwitch, e.rawLocal, c.sightName(e.nb)
			f.Detail = "a neighbour table from a switch the plan does not name"
			f.Action = "add the switch to the plan, or check why it reports neighbours of this fabric"
		case e.nb.at.sw < 0 && c.judgedUnknown(e.local):
			continue
		case e.nb.at.sw < 0:
			f.Verdict, f.End, f.Found = UnknownSwitch, c.portName(e.local), e.nb.raw
			f.Rail = c.t.Switches[e.local.sw].Plane
			f.Action = fmt.Sprintf("trace where %s's cable goes: its neighbour names no switch of the plan", f.End)
		default:
			k := pairOf(e.local, e.nb.at)
			if known[k] || known[pairOf(e.local, swPort{e.nb.at.sw, 0})] {
				continue
			}
			known[k] = true
			f.End, f.Found = c.portName(e.local), c.portName(e.nb.at)
			f.Rail = c.t.Switches[e.local.sw].Plane
			f.Detail = "the plan has no cable " + f.End + " <-> " + f.Found
			f.Action = "unplug it, or add it to the plan"
		}
		c.rep.Ports = append(c.rep.Ports, f)
	}
}

// judgedUnknown: the line is a planned cable's own view, already judged
// unknown-switch.
func (c *checker) judgedUnknown(local swPort) bool {
	i, ok := c.anchors[local]
	return ok && c.items[i].found.seen && c.items[i].found.at.sw < 0
}
