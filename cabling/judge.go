package cabling

import (
	"fmt"
	"strconv"
	"strings"
)

func itoa(n int) string { return strconv.Itoa(n) }

func (c *checker) portName(p swPort) string {
	if p.sw < 0 {
		return "?"
	}
	if p.port == 0 {
		return c.t.Switches[p.sw].Name + ":?"
	}
	return c.t.Switches[p.sw].Name + ":" + itoa(int(p.port))
}

func (c *checker) sightName(s sight) string {
	if s.at.sw < 0 {
		return s.raw
	}
	return c.portName(s.at)
}

func rawNeighbor(n Neighbor) string {
	var parts []string
	for _, kv := range [][2]string{{"system", n.SystemName}, {"port id", n.PortID}, {"port description", n.PortDescription}, {"chassis", n.ChassisID}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+" "+strconv.Quote(kv[1]))
		}
	}
	if len(parts) == 0 {
		return "a neighbour with no name, port or chassis"
	}
	return strings.Join(parts, ", ")
}

// judge gives one planned item its verdict.
func (c *checker) judge(i int32) Finding {
	it := &c.items[i]
	f := c.base(it)
	found, ok := it.found, it.found.seen
	ps, pathOK := it.path.sight()
	switch {
	case ok && pathOK && ps.at.sw != found.at.sw:
		f.Detail = fmt.Sprintf("traced paths put it on %s (%d paths), LLDP on %s; LLDP is taken", c.t.Switches[ps.at.sw].Name, it.path.agree, c.sightName(found))
	case ok && pathOK:
		found.ev += "+" + EvidencePath
	case !ok && pathOK:
		found, ok = ps, true
	case !ok && it.path.other > 0:
		f.Detail = fmt.Sprintf("traced paths disagree on its leaf (%d say %s, %d elsewhere)", it.path.agree, c.t.Switches[it.path.sw].Name, it.path.other)
	}
	if !ok {
		return c.unseen(it, f)
	}
	f.Found, f.Evidence = c.sightName(found), found.ev
	exp := it.expected
	switch {
	case found.at.sw < 0:
		f.Verdict = UnknownSwitch
		f.Action = fmt.Sprintf("trace where %s's cable goes: its neighbour names no switch of the plan (add the switch to the plan if it belongs)", f.End)
	case found.at.sw == exp.sw && (found.at.port == exp.port || found.at.port == 0):
		f.Verdict = OK
		if found.at.port == 0 && f.Detail == "" {
			f.Detail = "the switch is confirmed, its port is not (" + c.unreadPort(found) + ")"
		}
	case found.at.sw == exp.sw:
		f.Verdict = WrongPort
		f.Action = c.move(f, it)
	default:
		if j, ok := c.swappedWith(i, found.at); ok {
			f.Verdict, f.With = Swapped, c.endName(&c.items[j])
			f.Action = fmt.Sprintf("swap the cables of %s and %s: %s belongs in %s, %s in %s", f.End, f.With, f.End, f.Expected, f.With, c.portName(c.items[j].expected))
			return f
		}
		fp, ep := c.t.Switches[found.at.sw].Plane, c.t.Switches[exp.sw].Plane
		switch {
		case fp >= 0 && ep >= 0 && fp != ep:
			f.Verdict = WrongRail
			f.Detail = join(f.Detail, fmt.Sprintf("%s serves rail %d, the plan puts this cable on rail %d", c.t.Switches[found.at.sw].Name, fp, ep))
		case it.hca >= 0:
			f.Verdict = WrongLeaf
		default:
			f.Verdict = WrongSwitch
		}
		f.Action = c.move(f, it)
	}
	return f
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func (c *checker) unreadPort(s sight) string {
	if s.ev == EvidencePath {
		return "traced paths name switches only"
	}
	return "no port number in its LLDP port ID or description"
}

func (c *checker) move(f Finding, it *item) string {
	what := "the cable of " + f.End
	if it.hca < 0 {
		what = "the far end of the cable from " + f.End
	}
	return fmt.Sprintf("move %s from %s to %s", what, f.Found, f.Expected)
}

func (c *checker) endName(it *item) string {
	if it.hca >= 0 {
		return c.t.HCAName(int(it.hca))
	}
	return c.portName(it.anchor)
}

func (c *checker) base(it *item) Finding {
	f := Finding{End: c.endName(it), Expected: c.portName(it.expected)}
	if it.hca >= 0 {
		h := c.t.HCAs[it.hca]
		f.Node, f.HCA, f.Rail = h.Node, h.Device, h.Rail
		if h.Device == "" {
			f.HCA = "rail " + itoa(h.Rail)
		}
	} else {
		f.Rail = c.t.Switches[it.anchor.sw].Plane
	}
	return f
}

// unseen is the verdict on a planned item nothing was seen of.
func (c *checker) unseen(it *item, f Finding) Finding {
	if it.hca >= 0 {
		switch {
		case it.state == hostDown:
			f.Verdict, f.Evidence = Missing, EvidenceHost
			f.Detail = join(f.Detail, "the port's link is down")
			f.Action = fmt.Sprintf("cable %s to %s, or replace its cable or optic", f.End, f.Expected)
		case it.state == hostUnreported && c.reports[f.Node]:
			f.Verdict, f.Evidence = Missing, EvidenceHost
			f.Detail = join(f.Detail, f.Node+" reports no HCA on rail "+itoa(f.Rail))
			f.Action = "check that the HCA is seated and its driver loaded, then cable it to " + f.Expected
		default:
			f.Verdict = NoEvidence
			why := "no LLDP neighbour heard and no traced path"
			if it.state == hostUnreported {
				why = f.Node + " reported no ports (no worker ran there)"
			} else if it.why != "" {
				why += ": " + it.why
			}
			f.Detail = join(f.Detail, why)
			f.Action = fmt.Sprintf("turn LLDP on at %s (or read it with lldpd on the node), or run a sweep that traces paths", c.t.Switches[it.expected.sw].Name)
		}
		return f
	}
	near, far := it.anchor.sw, it.expected.sw
	if c.read[near] || c.read[far] {
		f.Verdict, f.Evidence = Missing, EvidenceSwitch
		f.Detail = join(f.Detail, "no neighbour on either port in the switches' tables")
		if e, ok := c.seenAt[it.expected]; ok {
			f.Detail = join(f.Detail, f.Expected+" hears "+c.sightName(c.entries[e].nb))
		}
		f.Action = fmt.Sprintf("cable %s to %s, or replace its cable or optics", f.End, f.Expected)
		return f
	}
	f.Verdict = NoEvidence
	f.Detail = join(f.Detail, "neither switch's neighbour table was read")
	f.Action = fmt.Sprintf("read the LLDP tables of %s and %s", c.t.Switches[near].Name, c.t.Switches[far].Name)
	return f
}

// swappedWith finds the item of the same node (or the same near switch)
// whose planned far end this one reached and that reached this one's.
func (c *checker) swappedWith(i int32, at swPort) (int32, bool) {
	it := &c.items[i]
	var group []int32
	if it.hca >= 0 {
		group = c.nodes[c.t.HCAs[it.hca].Node]
	} else {
		group = c.bySw[it.anchor.sw]
	}
	matches := func(a, b swPort) bool { return a.sw == b.sw && (a.port == b.port || a.port == 0 || b.port == 0) }
	for _, j := range group {
		o := &c.items[j]
		if j == i || !matches(o.expected, at) {
			continue
		}
		s := o.found
		if !s.seen {
			s, _ = o.path.sight()
		}
		if s.seen && matches(s.at, it.expected) {
			return j, true
		}
	}
	return 0, false
}
