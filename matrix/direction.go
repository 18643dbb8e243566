package matrix

import (
	"fmt"
	"math"
	"sort"
)

// Direction: a healthy link carries RDMA writes equally well both ways
// (the same cable and ports; perftest repeats within a few percent), so an
// HCA that is much worse as initiator (row) than as target (column) has a
// fault on its transmit side: egress. Loss on its transmit path drops the
// data it sends, while as a target it sends only acknowledgements, so the
// row collapses (the lab's 3% netem egress loss: 0.0004 Gb/s as initiator,
// 0.06-0.1 as target). The reverse is ingress.
//
// directionFactor is the gap that counts: the medians of the two sides
// (Gb/s, or p50) at least 2x apart, or one side's failed share at least
// twice the other's and at least mostlyShare. 2x is far outside the few
// percent healthy directions differ by, yet inside what a one-way fault
// produces (a lossy direction: 100-1000x; a degraded lane: about 2x). It
// is asked only of HCAs the localization already blames, so noise never
// creates a suspect through it.
const directionFactor = 2.0

const (
	dirEgress  = "egress"
	dirIngress = "ingress"
)

// direction is the side an HCA's cells are worse on, if any.
type direction struct {
	dir   string // "", egress, ingress
	ratio float64
	what  string // the measured gap, for the reason
}

// sideFigs are one side's cells: failed, bad and tested counts, Gb/s and
// p50s.
type sideFigs struct {
	failed, bad, tested int
	gbps, p50           []float64
}

// direction compares node n's row and column on rail.
func (l *localizer) direction(n, rail int) direction {
	if rail < 0 || rail >= len(l.spans) {
		return direction{}
	}
	sp := &l.spans[rail]
	i := sort.SearchInts(sp.members, n)
	if i == len(sp.members) || sp.members[i] != n {
		return direction{}
	}
	p := l.a.peeker()
	var out, in sideFigs
	read := func(f *sideFigs, k, s, d int) {
		if !l.testedAt(k) {
			return
		}
		f.tested++
		if l.badAt(k) {
			f.bad++
		}
		if l.a.verdict(k) == VerdictFailed {
			f.failed++
			return
		}
		r := p.peek(s, d, rail)
		if g, ok := gbps(r); ok {
			f.gbps = append(f.gbps, g)
		}
		if v, ok := p50(r); ok {
			f.p50 = append(f.p50, v)
		}
	}
	for j, o := range sp.members {
		if j != i {
			read(&out, sp.at(i, j), n, o)
			read(&in, sp.at(j, i), o, n)
		}
	}
	return compareSides(&out, &in)
}

// compareSides decides from the failed shares first (the hardest
// evidence), then the bad shares (a side slow or short of bandwidth while
// the other passes), then bandwidth, then latency.
func compareSides(out, in *sideFigs) direction {
	if d := compareShares("failed", out.failed, out.tested, in.failed, in.tested); d.dir != "" {
		return d
	}
	if d := compareShares("bad in", out.bad, out.tested, in.bad, in.tested); d.dir != "" {
		if len(out.gbps) > 0 && len(in.gbps) > 0 {
			d.what += fmt.Sprintf("; as initiator %s Gb/s median vs %s Gb/s as target", sig3(median(out.gbps)), sig3(median(in.gbps)))
		}
		return d
	}
	if len(out.gbps) >= 2 && len(in.gbps) >= 2 {
		go_, gi := median(out.gbps), median(in.gbps)
		if lo, hi := min(go_, gi), max(go_, gi); hi > 0 && (lo == 0 || hi/lo >= directionFactor) {
			d := direction{dir: dirEgress}
			if gi < go_ {
				d.dir = dirIngress
			}
			d.what = fmt.Sprintf("as initiator %s Gb/s median vs %s Gb/s as target", sig3(go_), sig3(gi))
			if lo > 0 { // a side that moved nothing has no finite ratio
				d.ratio = hi / lo
				d.what += fmt.Sprintf(" (%sx)", sig3(d.ratio))
			}
			return d
		}
	}
	if len(out.p50) >= 2 && len(in.p50) >= 2 {
		po, pi := median(out.p50), median(in.p50)
		if lo, hi := min(po, pi), max(po, pi); hi/lo >= directionFactor {
			d := direction{dir: dirEgress, ratio: hi / lo}
			if pi > po {
				d.dir = dirIngress
			}
			d.what = fmt.Sprintf("as initiator p50 %s median vs %s as target (%sx)", formatNs(po), formatNs(pi), sig3(d.ratio))
			return d
		}
	}
	return direction{}
}

// directionFix points at the side the cells blame, ahead of the fix the
// verdict or the cells gave.
func directionFix(d direction, name, fix string) string {
	var side string
	switch d.dir {
	case dirEgress:
		side = fmt.Sprintf("look at %s's transmit side first: its port's TX discards and pause counters and PFC/ECN on its "+
			"egress priority (ethtool -S, perfquery), the cable/optics from it and the switch port receiving from it "+
			"(RX and symbol errors)", name)
	case dirIngress:
		side = fmt.Sprintf("look at %s's receive side first: its port's RX errors, discards and out-of-buffer counters "+
			"(ethtool -S, perfquery), whether it sends PFC pauses when its buffers fill, the cable/optics into it and "+
			"the switch port transmitting to it", name)
	default:
		return fix
	}
	if fix == "" {
		return side
	}
	return side + "; then " + fix
}

// withDirection adds a blamed HCA's direction to its suspect: the side,
// the measured gap ahead of the reason, the side's checks ahead of the fix.
func (l *localizer) withDirection(s *Suspect, name string, d direction) {
	if d.dir == "" {
		return
	}
	s.Direction, s.DirectionRatio = d.dir, math.Round(d.ratio*100)/100
	s.Reason = fmt.Sprintf("%s %s: %s; %s", name, d.dir, d.what, s.Reason)
	s.Fix = directionFix(d, name, s.Fix)
}

// nodeDirection is the direction every HCA of a node suspect shares, with
// the smallest of their gaps; none when they disagree.
func (l *localizer) nodeDirection(parts []*finding) direction {
	var d direction
	for i, f := range parts {
		fd := l.direction(f.node, f.rail)
		if fd.dir == "" || (i > 0 && fd.dir != d.dir) {
			return direction{}
		}
		if i == 0 || fd.ratio < d.ratio {
			d.dir, d.ratio = fd.dir, fd.ratio
			d.what = fmt.Sprintf("on all %d HCAs; rail %d: %s", len(parts), f.rail, fd.what)
		}
	}
	return d
}

// compareShares finds a direction in the share of cells that are (what)
// on each side: the worse at least mostlyShare and directionFactor times
// the better, both sides tested at least twice.
func compareShares(what string, outN, outT, inN, inT int) direction {
	so, si := share(outN, outT), share(inN, inT)
	worse, better := max(so, si), min(so, si)
	if outT < 2 || inT < 2 || worse < mostlyShare || worse < directionFactor*better {
		return direction{}
	}
	d := direction{dir: dirEgress}
	if si > so {
		d.dir = dirIngress
	}
	d.what = fmt.Sprintf("%s %d/%d as initiator vs %d/%d as target", what, outN, outT, inN, inT)
	if better > 0 {
		d.ratio = worse / better
		d.what += fmt.Sprintf(" (%sx)", sig3(d.ratio))
	} else {
		// None on the better side: the ratio is at least what one cell
		// there would give.
		n := inT
		if d.dir == dirIngress {
			n = outT
		}
		d.ratio = worse * float64(n)
		d.what += fmt.Sprintf(" (at least %sx)", sig3(d.ratio))
	}
	return d
}
