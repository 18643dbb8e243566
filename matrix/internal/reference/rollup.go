package reference

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

// nodeRollups counts, per node, the cells where it is the row or the column.
// It walks the rail spans rather than looking names up: 32k map lookups per
// Build were a fifth of its time on a 64x8 fabric. Every node's p50 list is
// carved out of one buffer sized up front, so 16 M figures at 1,024 x 8 are
// one allocation instead of thousands of growing slices.
func nodeRollups(ns []Node, spans []railSpan, cells []Result) []Rollup {
	accs := make([]rollupAcc, len(ns))
	need := make([]int, len(ns))
	total := 0
	for _, sp := range spans {
		for _, n := range sp.members {
			need[n] += 2 * (len(sp.members) - 1)
			total += 2 * (len(sp.members) - 1)
		}
	}
	buf := make([]float64, total)
	off := 0
	for i, n := range ns {
		accs[i].r.Key = n.Name
		accs[i].p50s = buf[off : off : off+need[i]]
		off += need[i]
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
	var scratch []float64
	for r := range out {
		acc := rollupAcc{r: Rollup{Key: railKey(r)}, p50s: scratch[:0]}
		sp := spans[r]
		for i := sp.start; i < sp.end(); i++ {
			acc.add(&cells[i])
		}
		out[r] = acc.done()
		scratch = acc.p50s // reuse the grown buffer for the next rail
	}
	return out
}

func railKey(r int) string { return fmt.Sprintf("rail-%d", r) }
