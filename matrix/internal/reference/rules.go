package reference

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
	th            Thresholds
	ns            []Node
	base          []baseFig // per Matrix.Cells index; nil without a baseline
	p50, p99, gbs []float64
}

type baseFig struct{ p50, gbps float64 }

func newJudge(ns []Node, th Thresholds, spans []railSpan, cells int) *judge {
	j := &judge{th: th, ns: ns}
	if th.Baseline != nil {
		j.base = baselineFigures(ns, spans, th.Baseline, cells)
	}
	return j
}

// baselineFigures places the baseline's cells at their Matrix.Cells index.
// Cells of nodes or rails this sweep does not have are skipped.
func baselineFigures(ns []Node, spans []railSpan, b *Baseline, cells int) []baseFig {
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
	out := make([]baseFig, cells)
	for _, c := range b.Cells {
		s, okS := byName[c.Src]
		d, okD := byName[c.Dst]
		if !okS || !okD || s == d || c.Rail < 0 || c.Rail >= len(spans) {
			continue
		}
		i, k := pos[c.Rail][s], pos[c.Rail][d]
		if i < 0 || k < 0 {
			continue
		}
		out[spans[c.Rail].at(int(i), int(k))] = baseFig{p50: c.P50Ns, gbps: c.Gbps}
	}
	return out
}

// railStats are one rail's population figures.
type railStats struct {
	minP50, maxGbps float64
	medP99          float64 // for the tail rule; 0 = off or unknown
	zP50, zP99, zG  robust
}

func (j *judge) stats(cells []Result) railStats {
	st := railStats{minP50: math.Inf(1)}
	j.p50, j.p99, j.gbs = j.p50[:0], j.p99[:0], j.gbs[:0]
	for i := range cells {
		c := &cells[i]
		if c.Verdict != VerdictOK {
			continue
		}
		if p, ok := p50(c); ok {
			st.minP50 = min(st.minP50, p)
			j.p50 = append(j.p50, p)
		}
		if p, ok := p99(c); ok {
			j.p99 = append(j.p99, p)
		}
		if g, ok := gbps(c); ok {
			st.maxGbps = max(st.maxGbps, g)
			j.gbs = append(j.gbs, g)
		}
	}
	if j.th.TailFactor > 0 {
		// Before robustStats, which overwrites the scratch slices with
		// deviations; median only reorders them.
		st.medP99 = median(j.p99)
	}
	if j.th.RobustZ > 0 {
		st.zP50, st.zP99, st.zG = robustStats(j.p50), robustStats(j.p99), robustStats(j.gbs)
	}
	return st
}

func (j *judge) rail(sp *railSpan, out []Result) {
	cells := out[sp.start:sp.end()]
	if len(cells) == 0 {
		return
	}
	st := j.stats(cells)
	rates := make([]float64, len(sp.members))
	for i, n := range sp.members {
		rates[i] = lineRate(j.ns[n], sp.rail)
	}
	for i := range sp.members {
		for k := range sp.members {
			if i == k {
				continue
			}
			at := sp.at(i, k)
			c := &out[at]
			if c.Verdict != VerdictOK {
				continue
			}
			var b baseFig
			if j.base != nil {
				b = j.base[at]
			}
			j.cell(c, sp.rail, &st, portRate(rates[i], rates[k]), b)
		}
	}
}

// cell runs every enabled rule on one measured cell. Reasons are built only
// for cells that break a rule, so a healthy rail allocates nothing here.
// Latency wins the verdict because ClusterKit checks it first; the reason
// keeps every broken rule so nothing is hidden.
func (j *judge) cell(c *Result, rail int, st *railStats, rate float64, b baseFig) {
	th := &j.th
	var slow, low []string
	p, hasP := p50(c)
	tail, hasT := p99(c)
	g, hasG := gbps(c)

	// Ratios, not products, so a cell exactly at the limit (2226 ns over a
	// 1060 ns minimum) is not flagged by a rounding error.
	if hasP && !math.IsInf(st.minP50, 1) && p/st.minP50 > th.LatencyFactor {
		slow = append(slow, fmt.Sprintf("p50 %s is %.1fx the rail-%d minimum %s (limit %sx)",
			formatNs(p), p/st.minP50, rail, formatNs(st.minP50), num(th.LatencyFactor)))
	}
	if hasG && st.maxGbps > 0 && g/st.maxGbps < th.BandwidthFraction {
		low = append(low, fmt.Sprintf("bandwidth %s Gb/s is %s%% of the rail-%d maximum %s Gb/s (limit %s%%)",
			sig3(g), sig3(100*g/st.maxGbps), rail, sig3(st.maxGbps), sig3(100*th.BandwidthFraction)))
	}
	if th.RobustZ > 0 {
		if z := st.zP50.z(p); hasP && st.zP50.ok && z > th.RobustZ {
			slow = append(slow, fmt.Sprintf("p50 %s is %s robust SDs above the rail-%d median %s (limit %s)",
				formatNs(p), sig3(z), rail, formatNs(st.zP50.med), num(th.RobustZ)))
		}
		if z := st.zP99.z(tail); hasT && st.zP99.ok && z > th.RobustZ {
			slow = append(slow, fmt.Sprintf("p99 %s is %s robust SDs above the rail-%d median p99 %s (limit %s)",
				formatNs(tail), sig3(z), rail, formatNs(st.zP99.med), num(th.RobustZ)))
		}
		if z := st.zG.z(g); hasG && st.zG.ok && -z > th.RobustZ {
			low = append(low, fmt.Sprintf("bandwidth %s Gb/s is %s robust SDs below the rail-%d median %s Gb/s (limit %s)",
				sig3(g), sig3(-z), rail, sig3(st.zG.med), num(th.RobustZ)))
		}
	}
	if th.TailFactor > 0 && hasT && st.medP99 > 0 && tail/st.medP99 > th.TailFactor {
		slow = append(slow, fmt.Sprintf("p99 %s is %.1fx the rail-%d median p99 %s (limit %sx)",
			formatNs(tail), tail/st.medP99, rail, formatNs(st.medP99), num(th.TailFactor)))
	}
	if th.MaxP99Ns > 0 && hasT && tail > th.MaxP99Ns {
		slow = append(slow, fmt.Sprintf("p99 %s is over the %s limit", formatNs(tail), formatNs(th.MaxP99Ns)))
	}
	if th.MinGbps > 0 && hasG && g < th.MinGbps {
		low = append(low, fmt.Sprintf("bandwidth %s Gb/s is under the %s Gb/s minimum", sig3(g), num(th.MinGbps)))
	}
	if th.LineRateFraction > 0 && hasG && rate > 0 && bigMessages(c) && g/rate < th.LineRateFraction {
		low = append(low, fmt.Sprintf("bandwidth %s Gb/s is %s%% of the %s Gb/s port rate (limit %s%%)",
			sig3(g), sig3(100*g/rate), sig3(rate), sig3(100*th.LineRateFraction)))
	}
	if th.BaselineLatency > 0 && hasP && b.p50 > 0 && p/b.p50 > 1+th.BaselineLatency {
		slow = append(slow, fmt.Sprintf("p50 %s is +%s%% over baseline %s's %s (limit +%s%%)",
			formatNs(p), sig3(100*(p/b.p50-1)), quoteName(th.BaselineName), formatNs(b.p50), sig3(100*th.BaselineLatency)))
	}
	if th.BaselineBandwidth > 0 && hasG && b.gbps > 0 && g/b.gbps < 1-th.BaselineBandwidth {
		low = append(low, fmt.Sprintf("bandwidth %s Gb/s is -%s%% under baseline %s's %s Gb/s (limit -%s%%)",
			sig3(g), sig3(100*(1-g/b.gbps)), quoteName(th.BaselineName), sig3(b.gbps), sig3(100*th.BaselineBandwidth)))
	}
	switch {
	case len(slow) > 0:
		c.Verdict, c.Reason = VerdictSlowLatency, strings.Join(append(slow, low...), "; ")
	case len(low) > 0:
		c.Verdict, c.Reason = VerdictLowBandwidth, strings.Join(low, "; ")
	}
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
