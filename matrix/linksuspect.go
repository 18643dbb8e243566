package matrix

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/topology"
)

// suspect turns a choice into a Suspect. A host cable's choice takes over
// the HCA suspect of the same port when there is one (its direction and
// counters stay): the matrix cannot tell an HCA port from its cable, so
// the suspect names both ends.
func (ls *linkScan) suspect(c linkChoice) (Suspect, bool) {
	t := ls.t
	// Total is an expectation; it never reads below the bad cells counted.
	s := Suspect{Kind: c.kind, Bad: c.b, Total: max(int(math.Round(c.t)), c.b),
		BgBad: c.bgBad, BgTotal: int(math.Round(c.bgT))}
	ls.verdictOf(&s, c.cells)
	own, bg := ratio(c.b, c.t), ratio(c.bgBad, c.bgT)
	contrast := 0.0
	if own > 0 {
		contrast = (own - bg) / own
	}
	s.Confidence = confidence(contrast, witnesses(c.b))
	tests := fmt.Sprintf("%d of about %d tests routed through it were bad (%s)", c.b, s.Total, ls.tally(c.cells))
	switch c.kind {
	case KindSwitch:
		sw := t.Switches[c.sw]
		s.Switch, s.Rail = sw.Name, max(sw.Plane, 0)
		s.Reason = fmt.Sprintf("switch %s (%s): %s; %d of about %d tests elsewhere", sw.Name, sw.Tier, tests, c.bgBad, s.BgTotal)
		s.Fix = fmt.Sprintf("check switch %s: its ports' error and discard counters, its log, buffer/PFC settings and power; "+
			"move traffic off it (drain it from ECMP) until it is repaired", sw.Name)
		if len(c.same) > 0 {
			var names []string
			for _, i := range c.same {
				names = append(names, t.CableName(i))
			}
			s.Note = fmt.Sprintf("every test through %s also crossed %s: the sweep cannot tell the switch from %s; check those cables' ports too",
				sw.Name, strings.Join(names, " and "), map[bool]string{true: "that cable", false: "those cables"}[len(names) == 1])
			s.Fix += "; " + "its cables " + strings.Join(names, ", ") + " carry the same tests: check their port counters and optics as well"
			if in, out, ok := ls.oneWayThrough(c); ok {
				s.Direction = "one-way"
				s.Note += fmt.Sprintf("; every bad test crossed it one way, in over %s and out over %s, while the tests the other way were fine: "+
					"look first at those two links in that direction", t.LinkName(in), t.LinkName(out))
			}
		}
		return s, true
	}
	cb := t.Cables[c.cable]
	a, b := cb.A, cb.B
	if c.oneWay && !c.link.Forward() {
		a, b = b, a
	}
	s.Ends = []string{t.EndName(a), t.EndName(b)}
	if c.oneWay {
		s.Direction = "one-way"
	}
	way := "both directions"
	if c.oneWay {
		way = "only from " + s.Ends[0] + " to " + s.Ends[1]
	}
	s.Rail = ls.railOf(c)
	rest := ls.siblingName(c)
	switch c.kind {
	case KindCable:
		h, sw := a, b
		if !h.IsHCA() {
			h, sw = b, a
		}
		x := t.HCAs[h.HCA]
		s.Node, s.Device, s.Rail = x.Node, x.Device, x.Rail
		s.Reason = fmt.Sprintf("HCA port or its cable/optic %s <-> %s, %s: %s; %d of about %d through the rest of %s",
			t.EndName(h), t.EndName(sw), way, tests, c.bgBad, s.BgTotal, rest)
		s.Fix = fmt.Sprintf("on %s read the port's counters (`ethtool -S` / hw_counters of %s: symbol errors, out_of_sequence, link_downed) "+
			"and on %s port %d its error counters and the optic's receive power; reseat or replace the cable/optic, then the HCA if it stays",
			x.Node, x.Device, t.Switches[sw.Switch].Name, sw.Port)
		ls.adopt(&s)
	default:
		s.Reason = fmt.Sprintf("link %s <-> %s, %s: %s; %d of about %d through the rest of %s",
			s.Ends[0], s.Ends[1], way, tests, c.bgBad, s.BgTotal, rest)
		s.Fix = fmt.Sprintf("check the cable %s <-> %s: the error and discard counters of both switch ports (FCS/CRC, symbol errors, "+
			"link flaps) and both optics' receive power (DOM); reseat or replace the optic or cable; drain the link from ECMP meanwhile",
			t.EndName(cb.A), t.EndName(cb.B))
	}
	if c.hop != nil {
		s.Drop = c.hop.drop()
		if s.Class.Failed() {
			// Whatever each failed test looked like on its own (a lost
			// full-size write reads as an MTU problem), the measured drop
			// says what failed them: packets lost on this link.
			s.Class = probe.ClassRetryExceeded
		}
		s.Reason += "; hop loss: " + c.hop.words(t)
		// A measured drop at one link, not a count of tests that share it.
		s.Confidence = max(s.Confidence, hopConfidence)
	}
	return s, true
}

// adopt merges an HCA suspect of the same port into a host cable suspect.
func (ls *linkScan) adopt(s *Suspect) {
	out := ls.l.out
	for i := range out {
		o := &out[i]
		if o.Kind != KindHCA || o.Node != s.Node || o.Rail != s.Rail {
			continue
		}
		s.Direction, s.DirectionRatio, s.FromRound = o.Direction, o.DirectionRatio, o.FromRound
		if s.Direction == "" && len(s.Ends) == 2 {
			s.Direction = oneWayAsSide(s)
		}
		s.Confidence = max(s.Confidence, o.Confidence)
		ls.l.out = append(out[:i], out[i+1:]...)
		return
	}
	if s.Direction == "one-way" {
		s.Direction = oneWayAsSide(s)
	}
}

// oneWayAsSide says egress or ingress for a one-way host cable, as HCA
// suspects do: from the HCA is what it transmits.
func oneWayAsSide(s *Suspect) string {
	if s.Direction != "one-way" {
		return s.Direction
	}
	if len(s.Ends) == 2 && s.Ends[0] == s.Node+"/"+s.Device {
		return "egress"
	}
	return "ingress"
}

func (ls *linkScan) railOf(c linkChoice) int {
	cb := ls.t.Cables[c.cable]
	for _, e := range []topology.End{cb.A, cb.B} {
		if !e.IsHCA() && ls.t.Switches[e.Switch].Plane >= 0 {
			return ls.t.Switches[e.Switch].Plane
		}
	}
	if len(c.cells) > 0 {
		return ls.bad[c.cells[0]].rail
	}
	return 0
}

func (ls *linkScan) siblingName(c linkChoice) string {
	cb := ls.t.Cables[c.cable]
	s := cb.A.Switch
	if cb.A.IsHCA() || !cb.B.IsHCA() && ls.t.Switches[cb.B.Switch].Tier < ls.t.Switches[s].Tier {
		s = cb.B.Switch
	}
	return ls.t.Switches[s].Name
}

// verdictOf sets the dominant verdict and class of the explained cells.
func (ls *linkScan) verdictOf(s *Suspect, cells []int) {
	var failed, slow, low int
	classes := map[probe.Class]int{}
	for _, i := range cells {
		x := &ls.bad[i]
		switch ls.verdictOf1(x) {
		case VerdictFailed:
			failed++
			classes[ls.l.a.class(x.k)]++
		case VerdictSlowLatency:
			slow++
		case VerdictLowBandwidth:
			low++
		}
	}
	switch {
	case failed > 0 && 2*failed >= len(cells):
		s.Verdict = VerdictFailed
		best := 0
		for c, n := range classes {
			if n > best || n == best && c < s.Class {
				s.Class, best = c, n
			}
		}
	case low >= slow:
		s.Verdict, s.HardFailures = VerdictLowBandwidth, failed
	default:
		s.Verdict, s.HardFailures = VerdictSlowLatency, failed
	}
}

func (ls *linkScan) tally(cells []int) string {
	n := map[Verdict]int{}
	for _, i := range cells {
		n[ls.verdictOf1(&ls.bad[i])]++
	}
	vs := make([]string, 0, len(n))
	for v := range n {
		vs = append(vs, string(v))
	}
	sort.Strings(vs)
	out := ""
	for _, v := range vs {
		if out != "" {
			out += ", "
		}
		out += fmt.Sprintf("%s %d", v, n[Verdict(v)])
	}
	return out
}

// dropEchoes removes the suspects that only repeat the chosen links: the
// HCAs, nodes, pairs and rails whose bad cells the links explain (a lossy
// spine link makes scattered pairs and weak HCAs of the leaves it joins).
// Endpoints that failed outright keep their suspects; their cells were
// never lent to a link.
func (ls *linkScan) dropEchoes() {
	l := ls.l
	idx := make(map[string]int, len(l.m.Nodes))
	for i, n := range l.m.Nodes {
		idx[n.Name] = i
	}
	R := l.m.Rails
	type tally struct{ bad, done int }
	hca := map[int]*tally{}
	node := map[int]*tally{}
	pair := map[[2]int]*tally{}
	rail := map[int]*tally{}
	add := func(t *tally, done bool) {
		t.bad++
		if done {
			t.done++
		}
	}
	get := func(m map[int]*tally, k int) *tally {
		if m[k] == nil {
			m[k] = &tally{}
		}
		return m[k]
	}
	for i := range ls.bad {
		x := &ls.bad[i]
		for _, n := range []int{x.node, x.peer} {
			add(get(hca, n*R+x.rail), x.done)
			add(get(node, n), x.done)
		}
		k := [2]int{min(x.node, x.peer), max(x.node, x.peer)}
		if pair[k] == nil {
			pair[k] = &tally{}
		}
		add(pair[k], x.done)
		add(get(rail, x.rail), x.done)
	}
	echo := func(t *tally) bool { return t != nil && t.bad > 0 && float64(t.done) >= linkEcho*float64(t.bad) }
	kept := l.out[:0]
	for _, s := range l.out {
		n, known := idx[s.Node]
		drop := false
		switch s.Kind {
		case KindHCA:
			drop = known && echo(hca[n*R+s.Rail])
		case KindNode:
			drop = known && echo(node[n])
		case KindPair:
			p, ok := idx[s.Peer]
			drop = known && ok && echo(pair[[2]int{min(n, p), max(n, p)}])
		case KindRail:
			drop = echo(rail[s.Rail])
		}
		if !drop {
			kept = append(kept, s)
		}
	}
	l.out = kept
}

// verdictOf1 is the verdict a bad cell counts with: its first
// measurement's when retests cleared it.
func (ls *linkScan) verdictOf1(x *linkCell) Verdict {
	if x.first != "" {
		return x.first
	}
	return ls.l.a.verdict(x.k)
}

// oneWayThrough: for a switch that no test tells from its cables, the
// way every one of its bad tests crossed it (the link in, the link out),
// when they all took the same one and the tests that crossed it the
// other way were clean. Two leaves under a spine give this: a lossy
// leaf1 -> spine1 hurts every test that climbs from leaf1, and none that
// comes down to it.
func (ls *linkScan) oneWayThrough(c linkChoice) (in, out topology.Link, ok bool) {
	if len(c.cells) == 0 {
		return in, out, false
	}
	// The ways the first bad cell crossed the switch (its data path and
	// its return path may both have): one of them must be every cell's.
	for _, w := range ls.crossings(c.sw, c.cells[0]) {
		all := true
		for _, i := range c.cells[1:] {
			all = all && slices.Contains(ls.crossings(c.sw, i), w)
		}
		// The other way must have carried tests: otherwise "one way" says
		// nothing. Had it carried bad ones, some bad cell would have
		// crossed only that way and failed the test above.
		if all && ls.tL[w[1].Reverse()] >= float64(ls.minBad()) {
			return w[0], w[1], true
		}
	}
	return in, out, false
}

// crossings are the (in, out) link pairs by which bad cell i's paths
// cross switch sw.
func (ls *linkScan) crossings(sw, i int) [][2]topology.Link {
	x := &ls.bad[i]
	path := ls.paths[x.from:x.to]
	var out [][2]topology.Link
	for j := 0; j+1 < len(path); j++ {
		if to := ls.t.LinkTo(path[j]); !to.IsHCA() && to.Switch == sw {
			out = append(out, [2]topology.Link{path[j], path[j+1]})
		}
	}
	return out
}
