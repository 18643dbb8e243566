package matrix

import (
	"github.com/rdmamesh/rdmamesh/topology"
)

// linkChoice is one component the bad cells are blamed on.
type linkChoice struct {
	kind   string        // KindSwitch, KindCable or KindLink
	sw     int           // KindSwitch
	cable  int           // KindCable, KindLink
	link   topology.Link // the one direction, when oneWay
	oneWay bool
	b      int     // bad cells it explains
	t      float64 // tests expected through it
	bgBad  int     // the rest of the switch around it: bad cells
	bgT    float64 // and tests
	cells  []int   // indices into linkScan.bad
	// same: the switch's cables that carry the same tests as the switch
	// (a core with one cable per pod and two pods): no test can tell them
	// from it, so the suspect is the switch and the note names them.
	same []int
	// hop: the hop loss that named the cable (hoploss.go); nil for one
	// the counts chose.
	hop *hopFinding
}

// choose names components greedily: the one that explains the most bad
// cells and stands out from the background, narrowed from a switch to one
// of its cables when the cable is much worse than the switch, and to one
// direction when the other is clean; its cells are then explained and the
// next is sought among the rest.
func (ls *linkScan) choose() []linkChoice {
	var out []linkChoice
	remaining := ls.badTotal
	var sw []int
	for len(out) < linkMaxSuspects && remaining >= ls.minBad() {
		bg := float64(remaining) / max(ls.tested, 1)
		c, ok := ls.best(bg)
		if !ok {
			break
		}
		for i := range ls.bad {
			x := &ls.bad[i]
			if x.done || !ls.crosses(x, &c) {
				continue
			}
			x.done = true
			c.cells = append(c.cells, i)
			sw = ls.count(x, sw, -1)
			remaining--
		}
		out = append(out, c)
	}
	return out
}

func (ls *linkScan) best(bg float64) (linkChoice, bool) {
	t := ls.t
	var c linkChoice
	found := false
	for s := range t.Switches {
		if ls.significant(ls.bS[s], ls.bS[s], ls.tS[s], bg) && (!found || ls.bS[s] > c.b) {
			c, found = linkChoice{kind: KindSwitch, sw: s, b: ls.bS[s], t: ls.tS[s]}, true
		}
	}
	for i := range t.Cables {
		// A cable wins a tie with its switch: it is the narrower part.
		if ls.significant(ls.bC[i], ls.steeredBad(i), ls.tC[i], bg) && (!found || ls.bC[i] >= c.b) {
			c, found = ls.cableChoice(i), true
		}
	}
	if !found {
		return c, false
	}
	if c.kind != KindSwitch {
		c = ls.unlessSame(c)
	}
	if c.kind == KindSwitch {
		n, ok := ls.narrow(c, bg)
		if ok || n.kind == KindSwitch {
			c = n
		}
		if c.kind == KindSwitch {
			c.bgBad, c.bgT = ls.badTotal-c.b, ls.tested-c.t
		}
	}
	if c.kind != KindSwitch {
		ls.direction(&c, bg)
		ls.siblings(&c)
	}
	return c, true
}

// narrow picks the switch's worst cable when it is much worse than the
// rest of the switch: one bad cable makes every switch on its tests'
// paths look a little bad, a bad switch makes all its cables equally bad.
func (ls *linkScan) narrow(c linkChoice, bg float64) (linkChoice, bool) {
	t := ls.t
	best, bb := -1, 0
	for i, cb := range t.Cables {
		if cb.A.Switch != c.sw && cb.B.Switch != c.sw { // an HCA end's Switch is -1
			continue
		}
		if ls.significant(ls.bC[i], ls.steeredBad(i), ls.tC[i], bg) && ls.bC[i] > bb {
			best, bb = i, ls.bC[i]
		}
	}
	if best < 0 {
		return c, false
	}
	if ls.tC[best] >= sameShare*c.t {
		return ls.unlessSame(ls.cableChoice(best)), false
	}
	// Against the rest of the switch's tests: a bad switch makes them as
	// bad as the cable's, a bad cable leaves them at the background.
	rest := ratio(c.b-ls.bC[best], c.t-ls.tC[best])
	if ratio(ls.bC[best], ls.tC[best]) < linkConcentrate*max(rest, bg) {
		return c, false
	}
	return ls.cableChoice(best), true
}

// sameShare: a cable carrying this share of its switch's tests cannot be
// told from the switch.
const sameShare = 0.95

// unlessSame turns a cable whose every test also crosses one of its
// switches' other cables into that switch: nothing measured separates them.
func (ls *linkScan) unlessSame(c linkChoice) linkChoice {
	cb := ls.t.Cables[c.cable]
	for _, e := range []topology.End{cb.A, cb.B} {
		if e.IsHCA() || ls.tS[e.Switch] > c.t/sameShare+0.5 {
			continue
		}
		sw := linkChoice{kind: KindSwitch, sw: e.Switch, b: ls.bS[e.Switch], t: ls.tS[e.Switch]}
		for i, o := range ls.t.Cables {
			if (o.A.Switch == e.Switch || o.B.Switch == e.Switch) && ls.tC[i] >= sameShare*sw.t {
				sw.same = append(sw.same, i)
			}
		}
		sw.bgBad, sw.bgT = ls.badTotal-sw.b, ls.tested-sw.t
		return sw
	}
	return c
}

func (ls *linkScan) cableChoice(i int) linkChoice {
	cb := ls.t.Cables[i]
	kind := KindLink
	if cb.A.IsHCA() || cb.B.IsHCA() {
		kind = KindCable
	}
	return linkChoice{kind: kind, cable: i, b: ls.bC[i], t: ls.tC[i]}
}

// direction keeps one direction of a cable when the bad cells that cross
// only the other direction are no more than the background predicts. (A
// test's return path may cross the cable's other direction too, so the
// other direction's own tally is no witness.)
func (ls *linkScan) direction(c *linkChoice, bg float64) {
	fwd, rev := topology.Link(2*c.cable), topology.Link(2*c.cable+1)
	var onlyFwd, onlyRev int
	for i := range ls.bad {
		x := &ls.bad[i]
		if x.done {
			continue
		}
		f, r := false, false
		for _, lk := range ls.paths[x.from:x.to] {
			f, r = f || lk == fwd, r || lk == rev
		}
		switch {
		case f && !r:
			onlyFwd++
		case r && !f:
			onlyRev++
		}
	}
	for _, d := range [2]struct {
		one, other   topology.Link
		only, others int
	}{{fwd, rev, onlyFwd, onlyRev}, {rev, fwd, onlyRev, onlyFwd}} {
		if d.only > d.others && !ls.significant(d.others, 0, ls.tL[d.other], bg) {
			c.oneWay, c.link, c.b, c.t = true, d.one, ls.bL[d.one], ls.tL[d.one]
			return
		}
	}
}

// siblings is the background a cable is compared with: the rest of the
// traffic of the switch it hangs from (its leaf for a host cable, the
// lower end for a switch link).
func (ls *linkScan) siblings(c *linkChoice) {
	cb := ls.t.Cables[c.cable]
	s := cb.A.Switch
	if cb.A.IsHCA() || !cb.B.IsHCA() && ls.t.Switches[cb.B.Switch].Tier < ls.t.Switches[s].Tier {
		s = cb.B.Switch
	}
	c.bgBad, c.bgT = max(ls.bS[s]-c.b, 0), max(ls.tS[s]-c.t, 0)
}

// crosses reports whether a bad cell's path runs through the choice.
func (ls *linkScan) crosses(x *linkCell, c *linkChoice) bool {
	path := ls.paths[x.from:x.to]
	for i, lk := range path {
		switch {
		case c.kind == KindSwitch:
			if to := ls.t.LinkTo(lk); i < len(path)-1 && to.Switch == c.sw {
				return true
			}
		case c.oneWay:
			if lk == c.link {
				return true
			}
		case lk.Cable() == c.cable:
			return true
		}
	}
	return false
}
