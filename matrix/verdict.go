package matrix

import (
	"math"
	"strconv"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

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
	r.Verdict = classVerdict(r.Class, measured)
	switch {
	case !measured || r.Class == "":
		r.Reason = "no measurement recorded"
	case r.Class == probe.ClassTester, r.Class == probe.ClassUnreachable:
		r.Reason = "not judged: " + failureCause(r.Class, r.Error)
	case r.Class.Failed():
		r.Reason = failureCause(r.Class, r.Error)
	}
}

// classVerdict is judgeClass's verdict alone, which needs no error text.
func classVerdict(c probe.Class, measured bool) Verdict {
	switch {
	case !measured || c == "":
		return VerdictUntested
	case c == probe.ClassTester, c == probe.ClassUnreachable:
		// The tool's own fault, or a worker the control network could not
		// reach: no evidence about the link either way, so it must feed no
		// fabric suspect and no exclude list.
		return VerdictUntested
	case c.Failed():
		return VerdictFailed
	}
	return VerdictOK
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
