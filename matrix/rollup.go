package matrix

import (
	"fmt"
	"sort"
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

// nodeRollups counts, per node, the cells where it is the row or the column.
// It walks the rail spans rather than looking names up: 32k map lookups per
// Build were a fifth of its time on a 64x8 fabric.
func nodeRollups(ns []Node, spans []railSpan, cells []Result) []Rollup {
	accs := make([]rollupAcc, len(ns))
	for i, n := range ns {
		accs[i].r.Key = n.Name
	}
	for _, sp := range spans {
		k := sp.start
		for _, s := range sp.members {
			for _, d := range sp.members {
				if s == d {
					continue
				}
				accs[s].add(&cells[k])
				accs[d].add(&cells[k])
				k++
			}
		}
	}
	out := make([]Rollup, len(accs))
	for i := range accs {
		out[i] = accs[i].done()
	}
	return out
}

func railRollups(rails int, spans []railSpan, cells []Result) []Rollup {
	out := make([]Rollup, rails)
	for r := range out {
		acc := rollupAcc{r: Rollup{Key: railKey(r)}}
		sp := spans[r]
		m := len(sp.members)
		for i := sp.start; i < sp.start+m*(m-1); i++ {
			acc.add(&cells[i])
		}
		out[r] = acc.done()
	}
	return out
}

func railKey(r int) string { return fmt.Sprintf("rail-%d", r) }

// median sorts xs in place; callers pass a scratch slice they own.
func median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	sort.Float64s(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
