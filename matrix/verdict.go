package matrix

import (
	"fmt"
	"math"
	"strconv"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// DefaultThresholds are NVIDIA ClusterKit's pair rules: a pair is bad when its
// latency exceeds 2.1x the population minimum or its bandwidth falls under
// 93% of the population maximum.
func DefaultThresholds() Thresholds {
	return Thresholds{LatencyFactor: 2.1, BandwidthFraction: 0.93}
}

// orDefaults fills unset (or nonsensical) fields, so a zero Thresholds from
// a config file that omitted the section does not mark every cell slow.
func (t Thresholds) orDefaults() Thresholds {
	d := DefaultThresholds()
	if !(t.LatencyFactor >= 1) || math.IsInf(t.LatencyFactor, 0) {
		t.LatencyFactor = d.LatencyFactor
	}
	if !(t.BandwidthFraction > 0 && t.BandwidthFraction <= 1) {
		t.BandwidthFraction = d.BandwidthFraction
	}
	return t
}

// normalizeClass gives a cell a class even when its producer left it empty:
// the error's class if there is one, ok if it carries numbers, otherwise
// nothing (untested).
func normalizeClass(c *Cell) {
	if c.Class != "" {
		return
	}
	switch {
	case c.Error != nil && c.Error.Class != "":
		c.Class = c.Error.Class
	case c.Error != nil:
		c.Class = probe.ClassInternal
	case c.Latency != nil || c.Bandwidth != nil:
		c.Class = probe.ClassOK
	}
}

// judgeClass gives the verdict that needs no population: untested, failed,
// or (provisionally) ok.
func judgeClass(r *Result, measured bool) {
	switch {
	case !measured || r.Class == "":
		r.Verdict = VerdictUntested
		r.Reason = "no measurement recorded"
	case r.Class.Failed():
		r.Verdict = VerdictFailed
		r.Reason = failureCause(r.Class, r.Error)
	default:
		r.Verdict = VerdictOK
	}
}

func failureCause(c probe.Class, e *probe.Error) string {
	switch {
	case e == nil:
		return string(c) + " reported without error detail"
	case e.Cause != "":
		return e.Cause
	default:
		return e.Error()
	}
}

// judgeRail compares the ok cells of one rail against that rail's own
// population. Rails are judged separately because they can differ in speed
// (a storage rail, a slower generation) without anything being wrong.
func judgeRail(cells []Result, rail int, th Thresholds) {
	minP50, maxGbps := math.Inf(1), 0.0
	for i := range cells {
		c := &cells[i]
		if c.Verdict != VerdictOK {
			continue
		}
		if p, ok := p50(c); ok && p < minP50 {
			minP50 = p
		}
		if g, ok := gbps(c); ok && g > maxGbps {
			maxGbps = g
		}
	}
	for i := range cells {
		c := &cells[i]
		if c.Verdict != VerdictOK {
			continue
		}
		var slow, low string
		// Ratios, not products, so a cell exactly at the limit (2226 ns over
		// a 1060 ns minimum) is not flagged by a rounding error.
		if p, ok := p50(c); ok && !math.IsInf(minP50, 1) && p/minP50 > th.LatencyFactor {
			slow = fmt.Sprintf("p50 %s is %.1fx the rail-%d minimum %s (limit %sx)",
				formatNs(p), p/minP50, rail, formatNs(minP50), num(th.LatencyFactor))
		}
		if g, ok := gbps(c); ok && maxGbps > 0 && g/maxGbps < th.BandwidthFraction {
			low = fmt.Sprintf("bandwidth %s Gb/s is %s%% of the rail-%d maximum %s Gb/s (limit %s%%)",
				sig3(g), sig3(100*g/maxGbps), rail, sig3(maxGbps), sig3(100*th.BandwidthFraction))
		}
		// Latency wins the verdict because ClusterKit checks it first; the
		// reason keeps both so nothing is hidden.
		switch {
		case slow != "" && low != "":
			c.Verdict, c.Reason = VerdictSlowLatency, slow+"; "+low
		case slow != "":
			c.Verdict, c.Reason = VerdictSlowLatency, slow
		case low != "":
			c.Verdict, c.Reason = VerdictLowBandwidth, low
		}
	}
}

// p50 ignores zero and non-finite figures: a provider that reports 0 ns did
// not measure, and one bogus minimum would make every other cell "slow".
func p50(c *Result) (float64, bool) {
	if c.Latency == nil {
		return 0, false
	}
	p := c.Latency.P50Ns
	return p, p > 0 && !math.IsInf(p, 0) && !math.IsNaN(p)
}

func gbps(c *Result) (float64, bool) {
	if c.Bandwidth == nil {
		return 0, false
	}
	g := c.Bandwidth.Gbps
	return g, g >= 0 && !math.IsInf(g, 0) && !math.IsNaN(g)
}

// formatNs picks the unit an operator reads latency in.
func formatNs(ns float64) string {
	switch a := math.Abs(ns); {
	case a < 1e3:
		return sig3(ns) + " ns"
	case a < 1e6:
		return sig3(ns/1e3) + " µs"
	case a < 1e9:
		return sig3(ns/1e6) + " ms"
	default:
		return sig3(ns/1e9) + " s"
	}
}

// sig3 keeps three significant digits: more is noise at the precision of a
// p50, and never an exponent, which operators misread.
func sig3(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	digits := int(math.Floor(math.Log10(math.Abs(v)))) + 1 // before the point
	if digits >= 3 {
		// Divide by an exact power of ten so 12345 becomes 12300, not 12299.999….
		scale := math.Pow(10, float64(digits-3))
		return strconv.FormatFloat(math.Round(v/scale)*scale, 'f', 0, 64)
	}
	scale := math.Pow(10, float64(3-digits))
	return strconv.FormatFloat(math.Round(v*scale)/scale, 'f', -1, 64)
}

// num prints a configured figure as typed (2.1, not 2.100000).
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
