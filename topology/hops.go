package topology

import (
	"fmt"
	"net/netip"
)

// A traceroute names each hop by the address its ICMP answer came from.
// With the switches' addresses in the topology a traced flow becomes the
// links it crossed: measured, where Route can only model ECMP's choice.

func (t *Topology) indexAddrs() error {
	for i, s := range t.Switches {
		for _, a := range s.Addrs {
			ip, err := netip.ParseAddr(a)
			if err != nil {
				return fmt.Errorf("switch %s: address %q: want an IPv4 or IPv6 address", s.Name, a)
			}
			ip = ip.Unmap()
			if other, dup := t.byAddr[ip]; dup {
				return fmt.Errorf("address %s is given to switches %s and %s", ip, t.Switches[other].Name, s.Name)
			}
			if t.byAddr == nil {
				t.byAddr = map[netip.Addr]int{}
			}
			t.byAddr[ip] = i
		}
	}
	return nil
}

// HasAddrs reports whether any switch has an address: without one no
// traced hop can be mapped.
func (t *Topology) HasAddrs() bool { return len(t.byAddr) > 0 }

// HopAddrs appends, for each switch route (AppendRoute's links) arrives
// at, its first address, or the zero Addr when it has none: what a trace
// of the route's flow would hear from each hop.
func (t *Topology) HopAddrs(buf []netip.Addr, route []int32) []netip.Addr {
	for _, l := range route {
		e := t.LinkTo(Link(l))
		if e.IsHCA() {
			break
		}
		var a netip.Addr
		if s := t.Switches[e.Switch]; len(s.Addrs) > 0 {
			a, _ = netip.ParseAddr(s.Addrs[0]) // checked when the topology was built
		}
		buf = append(buf, a.Unmap())
	}
	return buf
}

// SwitchAt is the switch with address a.
func (t *Topology) SwitchAt(a netip.Addr) (int, bool) {
	s, ok := t.byAddr[a.Unmap()]
	return s, ok
}

// HopError says why a traced path does not map onto the topology.
type HopError struct {
	Hop int // 1-based TTL of the hop at fault, 0 for the path as a whole
	Msg string
}

func (e *HopError) Error() string {
	if e.Hop == 0 {
		return e.Msg
	}
	return fmt.Sprintf("hop %d: %s", e.Hop, e.Msg)
}

// PathFromHops is the links a flow from HCA src to HCA dst crossed, from
// its traceroute's hops in TTL order (an invalid address: a hop that did
// not answer; the destination's own answer, if any, may end the list).
// Each hop must be a switch of the topology, each pair of consecutive
// ones joined by exactly one cable, the first src's leaf and the last
// dst's. Nothing is guessed: an unanswered hop, an unknown address or
// two cables between the same switches give a *HopError naming the hop.
func (t *Topology) PathFromHops(buf []Link, src, dst int, hops []netip.Addr) ([]Link, error) {
	sw := make([]int, 0, len(hops))
	for i, a := range hops {
		if !a.IsValid() {
			return buf, &HopError{i + 1, "no answer: the switch there is not known"}
		}
		s, ok := t.SwitchAt(a)
		if !ok {
			if i == len(hops)-1 && len(sw) > 0 {
				break // the destination answering for itself
			}
			return buf, &HopError{i + 1, fmt.Sprintf("%s is no switch address of the topology (add it to the switch's addrs)", a)}
		}
		sw = append(sw, s)
	}
	if len(sw) == 0 {
		return buf, &HopError{0, "no switch answered"}
	}
	if first := t.LeafOf(src); sw[0] != first {
		return buf, &HopError{1, fmt.Sprintf("%s answered, but %s is cabled to %s", t.Switches[sw[0]].Name, t.HCAName(src), t.switchName(first))}
	}
	if last := t.LeafOf(dst); sw[len(sw)-1] != last {
		return buf, &HopError{len(sw), fmt.Sprintf("the path ends at %s, but %s is cabled to %s (the trace stopped short)",
			t.Switches[sw[len(sw)-1]].Name, t.HCAName(dst), t.switchName(last))}
	}
	out := append(buf, t.hcaLink(src, true))
	for i := 1; i < len(sw); i++ {
		l, err := t.linkBetween(sw[i-1], sw[i])
		if err != nil {
			return buf, &HopError{i + 1, err.Error()}
		}
		out = append(out, l)
	}
	return append(out, t.hcaLink(dst, false)), nil
}

func (t *Topology) switchName(s int) string {
	if s < 0 {
		return "no switch"
	}
	return t.Switches[s].Name
}

// linkBetween is the one link from switch a to switch b.
func (t *Topology) linkBetween(a, b int) (Link, error) {
	found, n := Link(-1), 0
	for i, c := range t.Cables {
		switch {
		case c.A.IsHCA() || c.B.IsHCA():
		case c.A.Switch == a && c.B.Switch == b:
			found, n = linkOf(i, true), n+1
		case c.B.Switch == a && c.A.Switch == b:
			found, n = linkOf(i, false), n+1
		}
	}
	switch n {
	case 0:
		return 0, fmt.Errorf("no cable joins %s and %s", t.Switches[a].Name, t.Switches[b].Name)
	case 1:
		return found, nil
	}
	return 0, fmt.Errorf("%d cables join %s and %s: which one the flow took is not known", n, t.Switches[a].Name, t.Switches[b].Name)
}
