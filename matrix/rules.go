package matrix

import (
	"fmt"
	"math"
	"strings"
)

// judge applies the measured-cell rules rail by rail. Each rail is judged
// against itself: rails can differ in speed (a storage rail, a slower
// generation) without anything being wrong. Scratch slices are reused
// across rails so a 1,024-node rail costs no allocation per cell.
type judge struct {
	th   Thresholds
	ns   []Node
	base []int32 // per cell index: 1 + index into th.Baseline.Cells, 0 = none; nil without a baseline
	cur  gather  // the rail being gathered (begin, add, done)
}

type baseFig struct{ p50, gbps float64 }

func newJudge(ns []Node, th Thresholds, spans []railSpan, cells int) *judge {
	j := &judge{th: th, ns: ns}
	if th.Baseline != nil {
		j.base = baselineIndex(ns, spans, th.Baseline, cells)
	}
	return j
}

// baselineIndex places the baseline's cells at their cell index (4 bytes a
// cell; the figures stay in the Baseline, which the thresholds hold anyway).
// Cells of nodes or rails this sweep does not have are skipped; a later
// duplicate wins.
func baselineIndex(ns []Node, spans []railSpan, b *Baseline, cells int) []int32 {
	byName := make(map[string]int, len(ns))
	for i, n := range ns {
		byName[n.Name] = i
	}
	// pos[rail][node] is the node's member position on the rail, or -1.
	pos := make([][]int32, len(spans))
	for r, sp := range spans {
		pos[r] = make([]int32, len(ns))
		for i := range pos[r] {
			pos[r][i] = -1
		}
		for i, n := range sp.members {
			pos[r][n] = int32(i)
		}
	}
	out := make([]int32, cells)
	for bi, c := range b.Cells {
		s, okS := byName[c.Src]
		d, okD := byName[c.Dst]
		if !okS || !okD || s == d || c.Rail < 0 || c.Rail >= len(spans) {
			continue
		}
		i, k := pos[c.Rail][s], pos[c.Rail][d]
		if i < 0 || k < 0 {
			continue
		}
		out[spans[c.Rail].at(int(i), int(k))] = int32(bi) + 1
	}
	return out
}

// baseAt is the baseline figures of cell k (zero: none).
func (j *judge) baseAt(k int) baseFig {
	if j.base == nil || j.base[k] == 0 {
		return baseFig{}
	}
	c := &j.th.Baseline.Cells[j.base[k]-1]
	return baseFig{p50: c.P50Ns, gbps: c.Gbps}
}

// railStats are one rail's population figures.
type railStats struct {
	minP50, maxGbps float64
	medP99          float64 // for the tail rule; 0 = off or unknown
	zP50, zP99, zG  robust
	noise           railSpread // how the rail is judged (spread.go)
	agg             *railAgg   // its nodes' sides judged together; nil on a quiet rail
}

// gather is a rail's population figures as its cells are read: min and
// max keep nothing, the medians keep the values (in the scratch reserve
// sized).
type gather struct {
	st            railStats
	p50, p99, gbs []float64
}

// reserve sizes the scratch for n cells, so a rail of n never grows it.
func (j *judge) reserve(n int) {
	robust := j.th.RobustZ > 0
	if robust || j.th.TailFactor > 0 {
		j.cur.p99 = make([]float64, 0, n)
	}
	if robust {
		j.cur.p50, j.cur.gbs = make([]float64, 0, n), make([]float64, 0, n)
	}
}

// release drops the scratch: it grew to a rail's cells, not for keeping.
func (j *judge) release() { j.cur = gather{} }

// begin, add and done gather a rail's population figures from its cells
// one at a time, so the cells need not be held.
func (j *judge) begin() {
	c := &j.cur
	*c = gather{st: railStats{minP50: math.Inf(1)}, p50: c.p50[:0], p99: c.p99[:0], gbs: c.gbs[:0]}
}

func (j *judge) add(c *Result) {
	if c.Verdict == VerdictOK {
		j.addFigs(figsOf(c))
	}
}

func (j *judge) addFigs(f figs) { j.gather(&j.cur, &f) }

// gather adds one ok cell's figures to g. Only the rules that need a
// population's median keep the values: min and max need none.
func (j *judge) gather(g *gather, f *figs) {
	st := &g.st
	robust := j.th.RobustZ > 0
	if f.hasP {
		st.minP50 = min(st.minP50, f.p50)
		if robust {
			g.p50 = append(g.p50, f.p50)
		}
	}
	if f.hasT && (robust || j.th.TailFactor > 0) {
		g.p99 = append(g.p99, f.p99)
	}
	if f.hasG {
		st.maxGbps = max(st.maxGbps, f.g)
		if robust {
			g.gbs = append(g.gbs, f.g)
		}
	}
}

// part is a gather for the cells at offsets o0..o1-1 of the rail begun,
// for a goroutine of its own: its values go in place into that stretch of
// the scratch (never more than one a cell), and join gathers the parts
// back in offset order.
func (j *judge) part(o0, o1 int) gather {
	stretch := func(s []float64) []float64 {
		if cap(s) < o1 {
			return nil // a rule that keeps no values: never appended to
		}
		return s[o0:o0:o1]
	}
	c := &j.cur
	return gather{st: railStats{minP50: math.Inf(1)}, p50: stretch(c.p50), p99: stretch(c.p99), gbs: stretch(c.gbs)}
}

// join adds a part to the rail begun; parts are joined in offset order.
// The part's values move down to follow the ones before (copy allows the
// overlap), so the scratch holds them in the order one goroutine would
// have added them: min, max and medians do not depend on it, but a 0 and
// a -0 would.
func (j *judge) join(g *gather) {
	c := &j.cur
	c.st.minP50 = min(c.st.minP50, g.st.minP50)
	c.st.maxGbps = max(c.st.maxGbps, g.st.maxGbps)
	c.p50 = append(c.p50, g.p50...)
	c.p99 = append(c.p99, g.p99...)
	c.gbs = append(c.gbs, g.gbs...)
}

func (j *judge) done() railStats {
	c := &j.cur
	st := c.st
	if j.th.TailFactor > 0 {
		// Before robustStats, which overwrites the scratch slices with
		// deviations; median only reorders them.
		st.medP99 = median(c.p99)
	}
	if j.th.RobustZ > 0 {
		st.zP50, st.zP99, st.zG = robustStats(c.p50), robustStats(c.p99), robustStats(c.gbs)
	}
	return st
}

func (j *judge) stats(cells []Result) railStats {
	j.begin()
	for i := range cells {
		j.add(&cells[i])
	}
	return j.done()
}

// figs are the figures the rules read from a cell, each only when valid
// (see p50, p99, gbps); big is bigMessages.
type figs struct {
	p50, p99, g      float64
	hasP, hasT, hasG bool
	big              bool
	// coded: p50 is the CodedSource's P50Table()[code] (p50Column).
	coded bool
	code  uint16
}

func figsOf(c *Result) figs {
	var f figs
	f.p50, f.hasP = p50(c)
	f.p99, f.hasT = p99(c)
	f.g, f.hasG = gbps(c)
	f.big = bigMessages(c)
	return f
}

// ends are a cell's two members' positions on its rail (aggregate.go);
// noEnds for a cell judged without them (cross-rail cells).
type ends struct{ src, dst int32 }

var noEnds = ends{-1, -1}

// cell runs every enabled rule on one measured cell and sets its verdict
// and reason.
func (j *judge) cell(c *Result, rail int, st *railStats, rate float64, b baseFig, e ends) Verdict {
	return j.rules(figsOf(c), c.Verdict, rail, st, rate, b, e, c)
}

// rules runs every enabled rule on the figures of a cell whose class
// verdict is v and returns its verdict. With c (text) it also sets c's
// verdict and reason; without, it allocates nothing, which is how the
// compact analysis judges millions of cells and regenerates a reason
// later, for the few cells shown, by the same code. Latency wins the
// verdict because ClusterKit checks it first; the reason keeps every
// broken rule so nothing is hidden.
func (j *judge) rules(f figs, v Verdict, rail int, st *railStats, rate float64, b baseFig, e ends, c *Result) Verdict {
	th := &j.th
	text := c != nil
	var slow, low []string
	nSlow, nLow := 0, 0
	p, hasP := f.p50, f.hasP
	tail, hasT := f.p99, f.hasT
	g, hasG := f.g, f.hasG

	// Ratios, not products, so a cell exactly at the limit (2226 ns over a
	// 1060 ns minimum) is not flagged by a rounding error.
	switch th.regimeOf(st.noise.p50) {
	case regimeQuiet:
		if hasP && !math.IsInf(st.minP50, 1) && p/st.minP50 > th.LatencyFactor {
			if nSlow++; text {
				slow = append(slow, fmt.Sprintf("p50 %s is %.1fx the rail-%d minimum %s (limit %sx)",
					formatNs(p), p/st.minP50, rail, formatNs(st.minP50), num(th.LatencyFactor)))
			}
		}
	case regimeNoisy:
		n := st.noise.p50
		if m := th.cellMargin(n, th.LatencyFactor); hasP && p > 0 && math.Log(p)-n.med > m {
			if nSlow++; text {
				slow = append(slow, fmt.Sprintf("p50 %s is %sx the rail-%d median %s, beyond the rail's noise (its p50s vary %s%%; limit %sx)",
					formatNs(p), sig3(p/n.typical()), rail, formatNs(n.typical()), sig3(100*n.sd), sig3(math.Exp(m))))
			}
		}
	}
	switch th.regimeOf(st.noise.gbps) {
	case regimeQuiet:
		if hasG && st.maxGbps > 0 && g/st.maxGbps < th.BandwidthFraction {
			if nLow++; text {
				low = append(low, fmt.Sprintf("bandwidth %s Gb/s is %s%% of the rail-%d maximum %s Gb/s (limit %s%%)",
					sig3(g), sig3(100*g/st.maxGbps), rail, sig3(st.maxGbps), sig3(100*th.BandwidthFraction)))
			}
		}
	case regimeNoisy:
		n := st.noise.gbps
		if m := th.cellMargin(n, 1/th.BandwidthFraction); hasG && g >= 0 && n.med-math.Log(g) > m {
			if nLow++; text {
				low = append(low, fmt.Sprintf("bandwidth %s Gb/s is %sx under the rail-%d median %s Gb/s, beyond the rail's noise (its Gb/s vary %s%%; limit %sx)",
					sig3(g), sig3(n.typical()/g), rail, sig3(n.typical()), sig3(100*n.sd), sig3(math.Exp(m))))
			}
		}
	}
	if st.agg != nil && e.src >= 0 {
		ns, nl := st.agg.rules(f, e, rail, text, &slow, &low)
		nSlow, nLow = nSlow+ns, nLow+nl
	}
	if th.RobustZ > 0 {
		if z := st.zP50.z(p); hasP && st.zP50.ok && z > th.RobustZ {
			if nSlow++; text {
				slow = append(slow, fmt.Sprintf("p50 %s is %s robust SDs above the rail-%d median %s (limit %s)",
					formatNs(p), sig3(z), rail, formatNs(st.zP50.med), num(th.RobustZ)))
			}
		}
		if z := st.zP99.z(tail); hasT && st.zP99.ok && z > th.RobustZ {
			if nSlow++; text {
				slow = append(slow, fmt.Sprintf("p99 %s is %s robust SDs above the rail-%d median p99 %s (limit %s)",
					formatNs(tail), sig3(z), rail, formatNs(st.zP99.med), num(th.RobustZ)))
			}
		}
		if z := st.zG.z(g); hasG && st.zG.ok && -z > th.RobustZ {
			if nLow++; text {
				low = append(low, fmt.Sprintf("bandwidth %s Gb/s is %s robust SDs below the rail-%d median %s Gb/s (limit %s)",
					sig3(g), sig3(-z), rail, sig3(st.zG.med), num(th.RobustZ)))
			}
		}
	}
	tailLimit := th.TailFactor
	switch th.regimeOf(st.noise.p99) {
	case regimeNoisy:
		tailLimit = max(tailLimit, math.Exp(th.OutlierZ*st.noise.p99.sd))
	case regimeUnjudged:
		tailLimit = 0
	}
	if tailLimit > 0 && th.TailFactor > 0 && hasT && st.medP99 > 0 && tail/st.medP99 > tailLimit {
		if nSlow++; text {
			slow = append(slow, fmt.Sprintf("p99 %s is %.1fx the rail-%d median p99 %s (limit %sx)",
				formatNs(tail), tail/st.medP99, rail, formatNs(st.medP99), sig3(tailLimit)))
		}
	}
	if th.MaxP99Ns > 0 && hasT && tail > th.MaxP99Ns {
		if nSlow++; text {
			slow = append(slow, fmt.Sprintf("p99 %s is over the %s limit", formatNs(tail), formatNs(th.MaxP99Ns)))
		}
	}
	if th.MinGbps > 0 && hasG && g < th.MinGbps {
		if nLow++; text {
			low = append(low, fmt.Sprintf("bandwidth %s Gb/s is under the %s Gb/s minimum", sig3(g), num(th.MinGbps)))
		}
	}
	if th.LineRateFraction > 0 && hasG && rate > 0 && f.big && g/rate < th.LineRateFraction {
		if nLow++; text {
			low = append(low, fmt.Sprintf("bandwidth %s Gb/s is %s%% of the %s Gb/s port rate (limit %s%%)",
				sig3(g), sig3(100*g/rate), sig3(rate), sig3(100*th.LineRateFraction)))
		}
	}
	if th.BaselineLatency > 0 && hasP && b.p50 > 0 && p/b.p50 > 1+th.BaselineLatency {
		if nSlow++; text {
			slow = append(slow, fmt.Sprintf("p50 %s is +%s%% over baseline %s's %s (limit +%s%%)",
				formatNs(p), sig3(100*(p/b.p50-1)), quoteName(th.BaselineName), formatNs(b.p50), sig3(100*th.BaselineLatency)))
		}
	}
	if th.BaselineBandwidth > 0 && hasG && b.gbps > 0 && g/b.gbps < 1-th.BaselineBandwidth {
		if nLow++; text {
			low = append(low, fmt.Sprintf("bandwidth %s Gb/s is -%s%% under baseline %s's %s Gb/s (limit -%s%%)",
				sig3(g), sig3(100*(1-g/b.gbps)), quoteName(th.BaselineName), sig3(b.gbps), sig3(100*th.BaselineBandwidth)))
		}
	}
	switch {
	case nSlow > 0:
		v = VerdictSlowLatency
	case nLow > 0:
		v = VerdictLowBandwidth
	}
	if text && v != c.Verdict {
		c.Verdict, c.Reason = v, strings.Join(append(slow, low...), "; ")
	}
	return v
}

func quoteName(s string) string {
	if s == "" {
		return "(unnamed)"
	}
	return fmt.Sprintf("%q", s)
}

// lineRate is the port rate the line-rate rule may use, or 0. Software RDMA
// (rxe, siw) reports its netdev's speed but is CPU bound far below it, so
// comparing it with the wire would fail every healthy cell of a lab.
func lineRate(n Node, rail int) float64 {
	if rail >= len(n.Ports) {
		return 0
	}
	p := n.Ports[rail]
	if strings.HasPrefix(p.Device, "rxe") || strings.HasPrefix(p.Device, "siw") {
		return 0
	}
	return positive(p.RateGbps)
}

// portRate is what a cell between two ports can reach: the slower end's
// rate. An end whose rate is unknown does not lower it.
func portRate(a, b float64) float64 {
	switch {
	case a > 0 && b > 0:
		return min(a, b)
	default:
		return max(a, b)
	}
}

// minLineRateMessage: streams of smaller messages are message-rate bound on
// every HCA (8-byte WRITEs reach a few Gb/s on a 400G port), so the
// line-rate rule would condemn a healthy port. Below it the rule is skipped.
const minLineRateMessage = 32 << 10

// bigMessages reports whether the stream used messages large enough for the
// line-rate rule, from Gb/s and messages per second. Unknown counts as big:
// the default sweep uses 64 KiB.
func bigMessages(c *Result) bool {
	b := c.Bandwidth
	if b == nil || !(b.MsgRate > 0) {
		return true
	}
	return b.Gbps*1e9/8/b.MsgRate >= minLineRateMessage
}

func p99(c *Result) (float64, bool) {
	if c.Latency == nil {
		return 0, false
	}
	p := c.Latency.P99Ns
	return p, p > 0 && !math.IsInf(p, 0) && !math.IsNaN(p)
}
