package store

import (
	"github.com/rdmamesh/rdmamesh/matrix"
)

// Figures makes GridSource a matrix.FigureSource: matrix.Analyse reads a
// cell's class and figures straight from the block's 16-bit codes,
// allocating nothing, and calls Fill only for cells with an error or
// retests. It only reads the frozen view, so readers may share it.
func (g *GridSource) Figures(f *matrix.Figures, src, dst, rail int) bool {
	b, j, slot, cls := g.v.at(src, dst, rail)
	if cls == 0 {
		return false
	}
	*f = matrix.Figures{Class: g.v.classes[cls&classMask-1], Round: int(b.Round[j]),
		Whole: b.Err != nil && b.Err[j] != 0 || len(g.v.retests) > 0 && g.v.retests[slot] != nil}
	if cls&flagLat != 0 {
		q := &b.Lat[j]
		f.Latency, f.P50Ns, f.P99Ns = true, g.figs[q[1]], g.figs[q[3]]
		f.P50Coded, f.P50Code = true, q[1]
		f.Samples = int(b.SamplesAt(j))
	}
	if cls&flagBW != 0 {
		q := &b.BW[j]
		f.Bandwidth, f.Gbps, f.MsgRate = true, g.figs[q.Q[0]], g.figs[q.Q[1]]
	}
	return true
}

// P50Table makes GridSource a matrix.CodedSource: a p50 is one of the
// quantisation's 65,536 values, so the analysis keeps its code (2 bytes a
// cell) rather than the float64 while it judges (1.07 GB at 4,096 x 8).
func (g *GridSource) P50Table() []float64 { return g.figs[:] }

var _ matrix.CodedSource = (*GridSource)(nil)
