package matrix

import (
	"slices"

	"github.com/rdmamesh/rdmamesh/topology"
)

// hopConfidence is a hop-loss suspect's least confidence: the drop was
// measured at the link, hundreds of probes deep.
const hopConfidence = 0.9

// hopChoices names first the cables hop loss found lossy that bad cells
// crossed, and takes those cells out of the counts the rest is chosen
// from: they are explained.
func (ls *linkScan) hopChoices(fs []hopFinding) []linkChoice {
	var out []linkChoice
	var sw []int
	for i := range fs {
		c := ls.cableChoice(fs[i].cable)
		c.hop = &fs[i]
		for j := range ls.bad {
			if x := &ls.bad[j]; !x.done && ls.crosses(x, &c) {
				c.cells = append(c.cells, j)
			}
		}
		if len(c.cells) == 0 {
			continue // no bad test crossed it: a warning (hopLossWarnings)
		}
		ls.hopDirection(&c)
		ls.siblings(&c)
		for _, j := range c.cells {
			x := &ls.bad[j]
			x.done = true
			sw = ls.count(x, sw, -1)
			ls.badTotal--
		}
		out = append(out, c)
	}
	return out
}

// hopDirection: the probes name the cable, not its direction (a hop's
// answer comes back over the links its probe crossed). The tests do: the
// traced data flows that crossed each direction, and how bad they were.
// A test whose data crossed the lossy direction runs out of retries; one
// whose acknowledgements cross it retransmits on timeouts and comes out
// slow or narrow: a failed test weighs 1, a slow or narrow one half. The
// direction whose data tests weigh at least twice the other's is the
// lossy one. Without traces, the bad tests' own data decides when it
// all crossed one way.
func (ls *linkScan) hopDirection(c *linkChoice) {
	fwd, rev := topology.Link(2*c.cable), topology.Link(2*c.cable+1)
	var bad [2]float64
	var all [2]int
	if ls.tr != nil {
		ls.eachTracedData(func(p []topology.Link, weight float64) {
			for d, lk := range [2]topology.Link{fwd, rev} {
				if slices.Contains(p, lk) {
					all[d]++
					bad[d] += weight
				}
			}
		})
	}
	if all[0] == 0 && all[1] == 0 {
		for _, j := range c.cells {
			x := &ls.bad[j]
			data := ls.paths[x.from:x.mid]
			for d, lk := range [2]topology.Link{fwd, rev} {
				if slices.Contains(data, lk) {
					all[d]++
					bad[d]++
				}
			}
		}
		if all[0] > 0 && all[1] > 0 {
			return
		}
	}
	rate := func(d int) float64 { return bad[d] / max(float64(all[d]), 1) }
	for d, one := range [2]topology.Link{fwd, rev} {
		o := 1 - d
		if bad[d] > 0 && rate(d) >= 2*rate(o) && rate(d) > 0 {
			c.oneWay, c.link, c.b, c.t = true, one, len(c.cells), max(ls.tL[one], float64(len(c.cells)))
			return
		}
	}
}

// eachTracedData calls fn with the traced data path of every measured
// cell whose ends the scan knows, and its weight: 1 failed, 0.5 slow or
// narrow, 0 fine.
func (ls *linkScan) eachTracedData(fn func(path []topology.Link, weight float64)) {
	for k, p := range ls.tr.paths {
		at, ok := ls.tracedCell(k)
		switch {
		case k.back || !ok:
		case ls.l.state[at]&stFailed != 0:
			fn(p, 1)
		case ls.l.badAt(at):
			fn(p, 0.5)
		default:
			fn(p, 0)
		}
	}
}

// WarnLinkLoss: hop loss found a link dropping packets while no test
// through it was bad: the tests retransmitted past it.
const WarnLinkLoss = "link-loss"

// hopLossWarnings are the hop-loss findings no suspect names.
func hopLossWarnings(t *topology.Topology, hops []hopFinding, ss []Suspect) []Warning {
	var out []Warning
	for _, f := range hops {
		cb := t.Cables[f.cable]
		a, b := t.EndName(cb.A), t.EndName(cb.B)
		named := false
		for _, s := range ss {
			if len(s.Ends) == 2 && (s.Ends[0] == a && s.Ends[1] == b || s.Ends[0] == b && s.Ends[1] == a) {
				named = true
			}
		}
		if named {
			continue
		}
		rail := 0
		for _, e := range []topology.End{cb.A, cb.B} {
			if !e.IsHCA() && t.Switches[e.Switch].Plane >= 0 {
				rail = t.Switches[e.Switch].Plane
			}
		}
		out = append(out, Warning{Kind: WarnLinkLoss, Link: t.CableName(f.cable), Rail: rail,
			Reason: "cable " + t.CableName(f.cable) + ": " + f.words(t) + "; no test through it was bad (the transport retransmitted what it lost)",
			Fix: "read both ports' error and discard counters (FCS/CRC, symbol errors) and the optics' receive power; " +
				"reseat or replace the optic or cable before it costs jobs bandwidth"})
	}
	return out
}
