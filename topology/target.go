package topology

import (
	"fmt"
	"strconv"
	"strings"
)

// TargetLinks resolves a fault's target to directed links (as int32, the
// form the simulated fabric keeps): a switch (sw set) to the links into
// it, which every path through it crosses once; a cable between two named
// ends (from, to) to both its directions, or to from → to alone when
// oneWay. An end is SWITCH:PORT, SWITCH alone when one cable joins the two
// switches, or NODE/DEVICE.
func (t *Topology) TargetLinks(sw, from, to string, oneWay bool) ([]int32, error) {
	if sw != "" {
		s, ok := t.Switch(sw)
		if !ok {
			return nil, fmt.Errorf("no switch %q in the topology", sw)
		}
		var out []int32
		for c, cb := range t.Cables {
			switch {
			case cb.B.Switch == s:
				out = append(out, int32(linkOf(c, true)))
			case cb.A.Switch == s:
				out = append(out, int32(linkOf(c, false)))
			}
		}
		return out, nil
	}
	var hits []Link
	for c, cb := range t.Cables {
		if t.endIs(cb.A, from) && t.endIs(cb.B, to) {
			hits = append(hits, linkOf(c, true))
		}
		if t.endIs(cb.B, from) && t.endIs(cb.A, to) {
			hits = append(hits, linkOf(c, false))
		}
	}
	switch {
	case len(hits) == 0:
		return nil, fmt.Errorf("the topology has no cable from %s to %s%s", from, to, t.cablesOf(from))
	case len(hits) > 1:
		var names []string
		for _, l := range hits {
			names = append(names, t.CableName(l.Cable()))
		}
		return nil, fmt.Errorf("%d cables join them (%s); name the ports", len(hits), strings.Join(names, ", "))
	}
	if oneWay {
		return []int32{int32(hits[0])}, nil
	}
	return []int32{int32(hits[0]), int32(hits[0].Reverse())}, nil
}

// AppendRoute is RouteAround in the simulated fabric's form: avoid holds
// the withdrawn links (nil: none).
func (t *Topology) AppendRoute(buf []int32, src, dst int, flow uint32, avoid map[int32]bool) []int32 {
	var tmp [16]Link
	var skip func(Link) bool
	if len(avoid) > 0 {
		skip = func(l Link) bool { return avoid[int32(l)] }
	}
	p, _ := t.route(tmp[:0], src, dst, flow, skip)
	for _, l := range p {
		buf = append(buf, int32(l))
	}
	return buf
}

// endIs matches an end against NAME, NAME:PORT or NODE/DEVICE.
func (t *Topology) endIs(e End, want string) bool {
	if e.IsHCA() {
		h := t.HCAs[e.HCA]
		return want == h.Node+"/"+h.Device
	}
	name, port, hasPort := strings.Cut(want, ":")
	if t.Switches[e.Switch].Name != name {
		return false
	}
	return !hasPort || port == strconv.Itoa(e.Port)
}

// cablesOf lists what an end is cabled to, so a refused fault shows the
// operator what they could have meant.
func (t *Topology) cablesOf(end string) string {
	var out []string
	for c, cb := range t.Cables {
		if t.endIs(cb.A, end) || t.endIs(cb.B, end) {
			out = append(out, t.CableName(c))
			if len(out) == 4 {
				out = append(out, "...")
				break
			}
		}
	}
	if len(out) == 0 {
		return " (and nothing named " + end + " is cabled)"
	}
	return " (" + end + " has " + strings.Join(out, ", ") + ")"
}
