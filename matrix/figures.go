package matrix

import "github.com/rdmamesh/rdmamesh/internal/probe"

// Figures are what the analysis judges a cell by: enough to give every
// verdict and gather every population statistic without building the
// cell. A Source that can hand them out without allocating (FigureSource)
// lets Analyse read millions of cells several times at no cost to the heap.
type Figures struct {
	Class probe.Class
	Round int
	// Latency and Bandwidth say whether the cell carries those figures.
	Latency, Bandwidth bool
	P50Ns, P99Ns       float64
	// Samples is the latency's sample count (probe.Latency.Samples); 0 in
	// a FigureSource that does not keep it.
	Samples       int
	Gbps, MsgRate float64
	// P50Coded says P50Ns is P50Table()[P50Code] of a CodedSource.
	P50Coded bool
	P50Code  uint16
	// Whole means the cell carries more than these (an error, retests):
	// the analysis then reads it with Fill.
	Whole bool
}

// FigureSource is a Source that reads a cell's figures without building
// it. Figures must be safe for concurrent use (readers share an analysis);
// Fill need not be, as the analysis serialises its calls.
type FigureSource interface {
	Source
	// Figures sets *f to the cell src → dst on rail and reports whether
	// there is one, as Fill does.
	Figures(f *Figures, src, dst, rail int) bool
}

// CodedSource is a FigureSource whose p50s are codes into one table (the
// coordinator's 16-bit quantisation): the analysis then keeps 2 bytes a
// cell for them instead of 8 while it judges (p50Column).
type CodedSource interface {
	FigureSource
	// P50Table is what a code stands for; Figures sets P50Coded and
	// P50Code for a p50 that is P50Table()[P50Code] exactly.
	P50Table() []float64
}

// peeker reads cells for the analysis passes: the judged class and figures
// in a reused Result, without names, devices or reasons. Each goroutine
// reading an analysis has its own.
type peeker struct {
	g   *cellGrid
	r   Result
	f   Figures
	lat probe.Latency
	bw  probe.Bandwidth
}

// peek loads cell (s, d, rail) (sorted node indices) and returns it with
// its class verdict (ok, failed or untested: the rules come later).
func (p *peeker) peek(s, d, rail int) *Result {
	r := &p.r
	*r = Result{}
	measured := p.load(s, d, rail)
	if measured && len(r.Retests) > 0 {
		resolveAttempts(&r.Cell)
	}
	normalizeClass(&r.Cell)
	r.Verdict = classVerdict(r.Class, measured)
	return r
}

func (p *peeker) load(s, d, rail int) bool {
	g := p.g
	if rail < g.idx.rails {
		if i := g.idx.find(s, d, rail); i >= 0 {
			r := &p.r
			r.Cell = g.cells[i]
			return true
		}
	}
	if g.src == nil {
		return false
	}
	if g.figs != nil {
		if !g.figs.Figures(&p.f, g.orig[s], g.orig[d], rail) {
			return false
		}
		if !p.f.Whole {
			c := &p.r.Cell
			c.Class, c.Round = p.f.Class, p.f.Round
			if p.f.Latency {
				p.lat = probe.Latency{Samples: p.f.Samples, P50Ns: p.f.P50Ns, P99Ns: p.f.P99Ns}
				c.Latency = &p.lat
			}
			if p.f.Bandwidth {
				p.bw = probe.Bandwidth{Gbps: p.f.Gbps, MsgRate: p.f.MsgRate}
				c.Bandwidth = &p.bw
			}
			return true
		}
	}
	return g.fillSource(&p.r.Cell, s, d, rail)
}
