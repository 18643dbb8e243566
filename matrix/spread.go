package matrix

import (
	"fmt"
	"math"
)

// Spread: ClusterKit's rules (2.1x the fastest p50, 7% under the best
// Gb/s) assume a quiet fabric, where healthy cells repeat within a few
// percent. On a rail whose healthy cells differ by more (Soft-RoCE,
// emulation, a congested fabric) the best cell is itself an outlier and
// most healthy cells would fail them. So each rail's noise is measured,
// in log space (a figure twice as slow and one half as fast are the same
// distance from the median), as 1.4826 x the median absolute deviation of
// the logs: the standard deviation of a log-normal population, not
// widened by the bad cells. A rail is then judged one of three ways:
//
//	quiet (noise <= QuietSpread): the fixed rules, as ClusterKit runs them
//	noisy (up to MaxSpread): a cell is slow or short only when it lies
//	       beyond OutlierZ noise SDs of the median and past the fixed
//	       rule's margin; a node's cells on one side are judged together
//	       (aggregate.go), which finds what the noise hides in one cell
//	too noisy: no cell is judged slow or short on its own; the node
//	       tests still run, and the matrix says why (Notices)
//
// A failed cell is evidence however noisy the rail.

// spreadSampleSize: the spread of a million cells is known well enough
// from four thousand, at no cost to the analysis.
const spreadSampleSize = 4096

// railSpread is one rail's noise, per figure.
type railSpread struct {
	p50, p99, gbps logNoise
}

// logNoise is a figure's centre and spread in log space; ok is false when
// the rail had too few cells to tell (minRobustCells).
type logNoise struct {
	med, sd float64 // median of ln(figure), robust SD of ln(figure)
	n       int     // cells it was taken from
	ok      bool
}

// sdBound is the noise a judgement assumes: the measured SD raised by its
// own uncertainty (a MAD from n cells is off by about 1.5/sqrt(n) of
// itself), so a rail of 12 cells that happen to sit close together does
// not make its next cell an outlier.
func (n logNoise) sdBound() float64 { return n.sd * (1 + 2.5/math.Sqrt(float64(max(n.n, 1)))) }

// The direction of a figure, for logNoiseOf.
const (
	higherBetter = +1.0
	lowerBetter  = -1.0
)

// spreadFloor keeps a rail whose cells tie (a simulator, a constant) from
// turning a 1% wobble into many SDs: run-to-run noise of a p50 or a Gb/s
// figure is about 1%.
const spreadFloor = 0.01

// minNoiseCells: a rail's noise is taken from at least this many cells;
// six are a 3-node rail, or a 4-node one with a node down.
const minNoiseCells = 6

// Where a rail's cells fall in two groups (a spine path slow for half of
// a cross-rail population, a leaf of slow nodes), the MAD measures the
// gap between the groups, not the noise. The better cells still show the
// noise: with goodSideCells or more, the spread between the 70th and 90th
// percentile of the better end (10th and 30th for latency) is taken too,
// and when it is under a sixth of the MAD's (noise alone makes the two
// agree), the rail's noise and centre are
// those of its better cells.
const (
	goodSideCells = 40
	goodSideShare = 0.15
	// z(0.9) - z(0.7), and z(0.8): the normal quantiles the good side's
	// spread and centre are read from.
	goodSideWidth  = 0.7576
	goodSideCentre = 0.8416
)

// logNoiseMin measures xs (reordered) when there are at least least of
// them; better is +1 when a higher figure is better (bandwidth), -1 when a
// lower one is (latency).
func logNoiseMin(xs []float64, better float64, least int) logNoise {
	if len(xs) < least {
		return logNoise{}
	}
	for i, v := range xs {
		xs[i] = better * math.Log(v) // higher is better from here on
	}
	n := len(xs)
	var good logNoise
	if n >= goodSideCells {
		q := func(p float64) float64 { return selectK(xs, min(n-1, int(p*float64(n)))) }
		q70, q80, q90 := q(0.7), q(0.8), q(0.9)
		sd := (q90 - q70) / goodSideWidth
		good = logNoise{med: better * (q80 - goodSideCentre*sd), sd: max(sd, spreadFloor), n: n, ok: true}
	}
	med := median(xs)
	for i, v := range xs {
		xs[i] = math.Abs(v - med)
	}
	mad := logNoise{med: better * med, sd: max(1.4826*median(xs), spreadFloor), n: n, ok: true}
	if good.ok && good.sd < goodSideShare*mad.sd {
		return good
	}
	return mad
}

// typical is the rail's median figure.
func (n logNoise) typical() float64 { return math.Exp(n.med) }

// regime is how a rail's figure is judged (see the comment above).
type regime uint8

const (
	regimeQuiet regime = iota
	regimeNoisy
	regimeUnjudged
)

func (t *Thresholds) regimeOf(n logNoise) regime {
	switch {
	// A rail is quiet only when its noise is surely small: twelve cells
	// of a 10% rail can sit within 5% of each other by chance.
	case !n.ok || n.sdBound() <= t.QuietSpread:
		return regimeQuiet
	case n.sd <= t.MaxSpread:
		return regimeNoisy
	}
	return regimeUnjudged
}

// cellMargin is how far (log) a cell must lie from the median on a noisy
// rail: beyond the noise and past the fixed rule's own margin.
func (t *Thresholds) cellMargin(n logNoise, fixed float64) float64 {
	return max(t.OutlierZ*n.sdBound(), math.Log(fixed))
}

// spreadSample keeps every stride-th measured cell's figures of a rail,
// up to about spreadSampleSize of them, with the cell's two members'
// positions so a side's own cells can be left out (aggregate.go).
type spreadSample struct {
	stride         int
	p50, p99, gbps []sampled
}

type sampled struct {
	v        float64
	src, dst int32 // member positions; -1 when not known (cross rails)
}

func newSpreadSample(cells int) *spreadSample {
	return &spreadSample{stride: max(1, cells/spreadSampleSize)}
}

// add takes the figures of the o-th cell of the rail, if it is sampled.
// Zero figures are left out: their log is no figure.
func (s *spreadSample) add(o int, f *figs, e ends) {
	if o%s.stride != 0 {
		return
	}
	if f.hasP && f.p50 > 0 {
		s.p50 = append(s.p50, sampled{f.p50, e.src, e.dst})
	}
	if f.hasT && f.p99 > 0 {
		s.p99 = append(s.p99, sampled{f.p99, e.src, e.dst})
	}
	if f.hasG && f.g > 0 {
		s.gbps = append(s.gbps, sampled{f.g, e.src, e.dst})
	}
}

// join appends a later stretch's sample (taken with the same stride).
func (s *spreadSample) join(t *spreadSample) {
	s.p50, s.p99, s.gbps = append(s.p50, t.p50...), append(s.p99, t.p99...), append(s.gbps, t.gbps...)
}

func (s *spreadSample) done() railSpread {
	return railSpread{p50: noiseWithout(s.p50, nil, lowerBetter), p99: noiseWithout(s.p99, nil, lowerBetter), gbps: noiseWithout(s.gbps, nil, higherBetter)}
}

// noiseWithout is the noise of the sampled cells that skip does not
// leave out (nil: none).
func noiseWithout(xs []sampled, skip func(sampled) bool, better float64) logNoise {
	return noiseWithoutMin(xs, skip, better, minNoiseCells)
}

// noiseWithoutMin is noiseWithout from at least least cells.
func noiseWithoutMin(xs []sampled, skip func(sampled) bool, better float64, least int) logNoise {
	vs := make([]float64, 0, len(xs))
	for _, x := range xs {
		if skip == nil || !skip(x) {
			vs = append(vs, x.v)
		}
	}
	return logNoiseMin(vs, better, least)
}

// noisy notes on a performance suspect how its rail was judged when the
// rail was not quiet, so the operator reads the verdict against the noise.
func (l *localizer) noisy(s *Suspect) {
	var metric string
	var pick func(railSpread) logNoise
	switch s.Verdict {
	case VerdictSlowLatency:
		metric, pick = "p50s", func(r railSpread) logNoise { return r.p50 }
	case VerdictLowBandwidth:
		metric, pick = "Gb/s", func(r railSpread) logNoise { return r.gbps }
	default:
		return // a hard failure is evidence however noisy the rail
	}
	th := &l.m.Thresholds
	var noise logNoise
	rail := s.Rail
	if s.Rail == AllRails { // a node: its noisiest rail
		for r, sp := range l.a.cv {
			if v := pick(sp); v.ok && v.sd > noise.sd {
				noise, rail = v, r
			}
		}
	} else if s.Rail >= 0 && s.Rail < len(l.a.cv) {
		noise = pick(l.a.cv[s.Rail])
	}
	if th.regimeOf(noise) == regimeQuiet {
		return
	}
	s.Spread = math.Round(noise.sd*1000) / 1000
	s.Note = joinNotes(s.Note, fmt.Sprintf("rail %d's healthy %s vary by %s%% cell to cell (robust SD in log space; %s%% is quiet): "+
		"judged against that noise, not against the fastest cell", rail, metric, sig3(100*noise.sd), sig3(100*th.QuietSpread)))
}

// noise lists the rails' figures that were not quiet, rail by rail.
func (a *analysis) noise(th *Thresholds) []RailNoise {
	var out []RailNoise
	for r, sp := range a.cv {
		for _, f := range []struct {
			name string
			n    logNoise
		}{{"p50", sp.p50}, {"gbps", sp.gbps}} {
			judged := "noisy"
			switch th.regimeOf(f.n) {
			case regimeQuiet:
				continue
			case regimeUnjudged:
				judged = "not-judged"
			}
			out = append(out, RailNoise{Rail: r, Figure: f.name, Spread: math.Round(f.n.sd*1000) / 1000, Judged: judged, Cells: f.n.n})
		}
	}
	return out
}
