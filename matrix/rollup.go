package matrix

import (
	"fmt"
)

// rollupAcc gathers one rollup; p50s are kept to take a median, which one
// dead-slow cell cannot drag the way it drags a mean.
type rollupAcc struct {
	r    Rollup
	p50s []float64
	bw   bool
}

func (a *rollupAcc) add(c *Result) {
	a.r.Cells++
	switch c.Verdict {
	case VerdictOK:
		a.r.OK++
	case VerdictFailed:
		a.r.Failed++
	case VerdictSlowLatency:
		a.r.Slow++
	case VerdictLowBandwidth:
		a.r.LowBandwidth++
	case VerdictUntested:
		a.r.Untested++
	}
	if p, ok := p50(c); ok {
		a.p50s = append(a.p50s, p)
	}
	if g, ok := gbps(c); ok && (!a.bw || g < a.r.MinGbps) {
		a.r.MinGbps, a.bw = g, true
	}
}

func (a *rollupAcc) done() Rollup {
	a.r.P50Ns = median(a.p50s)
	return a.r
}

func railKey(r int) string { return fmt.Sprintf("rail-%d", r) }
