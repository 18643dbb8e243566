package matrix

import (
	"fmt"
	"math"
)

// On a noisy rail one cell proves little: a transmit side rate-limited to
// a third hides inside a spread of 30% when each of its cells is judged
// alone. Its cells together do not: the median of a node's n cells on one
// side (as initiator: its row; as target: its column) wanders from the
// rail's median by about 1.25 x noise / sqrt(n), so a side whose median
// lies OutlierZ of those away, and past the fixed rule's margin, is that
// node's, in that direction. Its cells worse than the rail's median then
// carry the verdict, and localization names the HCA with its direction.
// Only rails that are not quiet get this: on a quiet one every such cell
// breaks the fixed rules by itself.

// aggMaxPeers bounds the cells a side's median is taken from: 255 peers
// pin it far below the noise, at a 4,096-node rail's cost of a sample.
const aggMaxPeers = 255

// railAgg is a rail's sides judged together, by member position.
type railAgg struct {
	p50Row, p50Col, gRow, gCol []sideFinding
	p50, g                     logNoise
}

// sideFinding is one side of one member: flagged when n > 0.
type sideFinding struct {
	median float64 // the side's median figure (ns or Gb/s)
	ref    float64 // the median of its peers' other cells, log
	limit  float64 // the ratio to that it had to pass
	n      int     // cells the median was taken from
}

func (s sideFinding) flagged() bool { return s.n > 0 }

// aggregate judges every member's sides on rail sp from the first pass's
// figures (rf, p50s), each against the rail's other cells (the sample
// without the side's own: one node's bad side widens the whole rail's
// spread on a small rail). It then takes the rail's noise again without
// the sides it flagged, which is what the cells are judged against.
func (a *analysis) aggregate(sp *railSpan, st *railStats, sample *spreadSample, rf *railFigs, p50s *p50Column) *railAgg {
	th := &a.j.th
	m := len(sp.members)
	ag := &railAgg{}
	judgeP := th.regimeOf(st.noise.p50) != regimeQuiet
	judgeG := th.regimeOf(st.noise.gbps) != regimeQuiet
	if judgeP {
		ag.p50Row, ag.p50Col = make([]sideFinding, m), make([]sideFinding, m)
	}
	if judgeG {
		ag.gRow, ag.gCol = make([]sideFinding, m), make([]sideFinding, m)
	}
	stride := max(1, (m-1)/aggMaxPeers)
	var ps, gs []float64
	for i := 0; i < m; i++ {
		for _, row := range []bool{true, false} {
			ps, gs = ps[:0], gs[:0]
			for j := 0; j < m; j += stride {
				if j == i {
					continue
				}
				k := sp.at(i, j)
				if !row {
					k = sp.at(j, i)
				}
				if a.cells[k]&verdictMask != 0 { // only measured ok cells
					continue
				}
				if p := p50s.at(k); judgeP && p > 0 {
					ps = append(ps, math.Log(p))
				}
				if g := rf.g[k-sp.start]; judgeG && g > 0 {
					gs = append(gs, math.Log(g))
				}
			}
			own := touching(int32(i))
			if judgeP {
				f := judgeSide(ps, st.noise.p50, sample.p50, own, m, +1, th.LatencyFactor, th.OutlierZ)
				if row {
					ag.p50Row[i] = f
				} else {
					ag.p50Col[i] = f
				}
			}
			if judgeG {
				f := judgeSide(gs, st.noise.gbps, sample.gbps, own, m, -1, 1/th.BandwidthFraction, th.OutlierZ)
				if row {
					ag.gRow[i] = f
				} else {
					ag.gCol[i] = f
				}
			}
		}
	}
	if judgeP {
		st.noise.p50 = ag.without(sample.p50, ag.p50Row, ag.p50Col, st.noise.p50, lowerBetter)
		st.noise.p99 = ag.without(sample.p99, ag.p50Row, ag.p50Col, st.noise.p99, lowerBetter)
	}
	if judgeG {
		st.noise.gbps = ag.without(sample.gbps, ag.gRow, ag.gCol, st.noise.gbps, higherBetter)
	}
	// Without the flagged sides a rail may be quiet after all (one slow
	// node of four was half its cells): the fixed rules then judge it,
	// those sides included, and the side findings add nothing.
	if th.regimeOf(st.noise.p50) == regimeQuiet {
		ag.p50Row, ag.p50Col = nil, nil
	}
	if th.regimeOf(st.noise.gbps) == regimeQuiet {
		ag.gRow, ag.gCol = nil, nil
	}
	if ag.p50Row == nil && ag.gRow == nil {
		return nil
	}
	ag.p50, ag.g = st.noise.p50, st.noise.gbps
	return ag
}

// touching picks the cells of member i out of a sample, on either side: a
// side is judged against its peers' other cells, as localization judges
// an HCA, so a node slow both ways is not its own reference.
func touching(i int32) func(sampled) bool {
	return func(x sampled) bool { return x.src == i || x.dst == i }
}

// without is the rail's noise from the sampled cells on no flagged side;
// the first estimate when nothing was flagged or too few cells are left.
func (ag *railAgg) without(xs []sampled, rows, cols []sideFinding, first logNoise, better float64) logNoise {
	any := false
	for i := range rows {
		any = any || rows[i].flagged() || cols[i].flagged()
	}
	if !any {
		return first
	}
	n := noiseWithoutMin(xs, func(x sampled) bool {
		return x.src >= 0 && (rows[x.src].flagged() || cols[x.dst].flagged())
	}, better, minSideReference)
	if !n.ok {
		return first
	}
	return n
}

// sideCandidate: on a rail of more than candidateRail members a side
// whose median lies fewer SEs than this from the whole rail's is not
// judged against its own background, which would cost a pass over the
// sample for every side. A small rail judges every side: one slow node of
// four is half its cells, and widens the whole rail's spread past it.
const (
	sideCandidate = 1.5
	candidateRail = 64
)

// smallReference: against fewer cells than this a side must also stand
// apart from them: every one of its cells worse than every other cell, by
// a gap of separationGap of the others' noise. A median and a MAD from a
// handful of cells are rough, and the order of the cells is not: three
// cells below nine others by chance is one side in 220, and then mostly
// by a sliver, where a rate-limited side sits whole factors below.
const (
	smallReference   = 20
	separationGap    = 2.0
	minSideReference = 4
)

// judgeSide judges one side's logs against the rail's other cells; worse
// is +1 when higher is worse (latency), -1 when lower is (bandwidth).
func judgeSide(logs []float64, rail logNoise, sample []sampled, own func(sampled) bool, members int, worse, fixed, z float64) sideFinding {
	if !rail.ok || len(logs) < 2 {
		return sideFinding{}
	}
	med := median(logs)
	n := math.Sqrt(float64(len(logs)))
	if members > candidateRail && worse*(med-rail.med) <= sideCandidate*1.2533*rail.sd/n {
		return sideFinding{}
	}
	// A side's peers' other cells are few on a small rail (four nodes,
	// one cell missing: five); apart() guards a reference that small.
	ref := noiseWithoutMin(sample, own, -worse, minSideReference)
	if !ref.ok {
		return sideFinding{}
	}
	// Against a small reference the order of the cells guards the
	// judgement; against a large one the SD's own uncertainty does.
	sd := ref.sdBound()
	if ref.n < smallReference {
		sd = ref.sd
	}
	limit := max(z*1.2533*sd/n, math.Log(fixed))
	if worse*(med-ref.med) <= limit {
		return sideFinding{}
	}
	if ref.n < smallReference && !apart(logs, sample, own, worse) {
		return sideFinding{}
	}
	return sideFinding{median: math.Exp(med), ref: ref.med, limit: math.Exp(limit), n: len(logs)}
}

// apart: the side's best cell lies beyond the worst other sampled cell by
// separationGap of the others' noise, taken from their range (for a few
// cells the range is a steadier measure of the spread than the MAD, and
// a heavy tail only widens it).
func apart(logs []float64, sample []sampled, own func(sampled) bool, worse float64) bool {
	sideBest := math.Inf(1) // in "worse" units
	for _, v := range logs {
		sideBest = min(sideBest, worse*v)
	}
	lo, hi, n := math.Inf(1), math.Inf(-1), 0
	for _, x := range sample {
		if !own(x) {
			v := worse * math.Log(x.v)
			lo, hi, n = min(lo, v), max(hi, v), n+1
		}
	}
	if n < 2 {
		return false
	}
	return sideBest-hi > separationGap*(hi-lo)/rangeFactor(n)
}

// rangeFactor is the expected range of n normal values in SDs (d2).
func rangeFactor(n int) float64 {
	d2 := [...]float64{2: 1.128, 1.693, 2.059, 2.326, 2.534, 2.704, 2.847, 2.970, 3.078, 3.173, 3.258, 3.336, 3.407, 3.472, 3.532, 3.588, 3.640, 3.689, 3.735}
	if n < len(d2) {
		return d2[n]
	}
	return d2[len(d2)-1]
}

// rules flags a cell that lies on a flagged side and is itself worse than
// that side's reference; it returns how many slow and low reasons it added.
func (ag *railAgg) rules(f figs, e ends, rail int, text bool, slow, low *[]string) (nSlow, nLow int) {
	at := func(fs []sideFinding, i int32) sideFinding {
		if fs == nil {
			return sideFinding{}
		}
		return fs[i]
	}
	type check struct {
		fs   sideFinding
		side string
	}
	for _, c := range []check{{at(ag.p50Row, e.src), "initiator"}, {at(ag.p50Col, e.dst), "target"}} {
		if c.fs.flagged() && f.hasP && f.p50 > 0 && math.Log(f.p50) > c.fs.ref {
			if nSlow++; text {
				ref := math.Exp(c.fs.ref)
				*slow = append(*slow, fmt.Sprintf("its %s's %d cells as %s have a median p50 of %s, %sx the %s of its peers' other rail-%d cells: "+
					"beyond the rail's noise (limit %sx for %d cells)", endName(c.side), c.fs.n, c.side, formatNs(c.fs.median),
					sig3(c.fs.median/ref), formatNs(ref), rail, sig3(c.fs.limit), c.fs.n))
			}
		}
	}
	for _, c := range []check{{at(ag.gRow, e.src), "initiator"}, {at(ag.gCol, e.dst), "target"}} {
		if c.fs.flagged() && f.hasG && f.g >= 0 && (f.g == 0 || math.Log(f.g) < c.fs.ref) {
			if nLow++; text {
				ref := math.Exp(c.fs.ref)
				*low = append(*low, fmt.Sprintf("its %s's %d cells as %s have a median of %s Gb/s, %sx under the %s Gb/s of its peers' other rail-%d cells: "+
					"beyond the rail's noise (limit %sx for %d cells)", endName(c.side), c.fs.n, c.side, sig3(c.fs.median),
					sig3(ref/c.fs.median), sig3(ref), rail, sig3(c.fs.limit), c.fs.n))
			}
		}
	}
	return nSlow, nLow
}

func endName(side string) string {
	if side == "initiator" {
		return "source"
	}
	return "destination"
}
