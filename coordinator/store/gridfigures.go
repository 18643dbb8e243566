package store

import "github.com/rdmamesh/rdmamesh/matrix"

// Figures makes GridSource a matrix.FigureSource: matrix.Analyse reads a
// cell's class and figures straight from the block's 16-bit codes,
// allocating nothing, and calls Fill only for cells with an error or
// retests. It only reads the frozen view, so readers may share it.
func (g *GridSource) Figures(f *matrix.Figures, src, dst, rail int) bool {
	if rail >= g.v.rails || src == dst || g.v.blocks == nil {
		return false
	}
	slot := gridSlot(g.v.n, src, dst, rail)
	bi := int(slot) >> blockBits
	if bi >= len(g.v.blocks) || g.v.blocks[bi] == nil {
		return false
	}
	b, j := g.v.blocks[bi], int(slot)&(blockLen-1)
	cls := b.class[j]
	if cls == 0 {
		return false
	}
	*f = matrix.Figures{Class: g.v.classes[cls&classMask-1], Round: int(b.round[j]),
		Whole: b.err != nil && b.err[j] != 0 || len(g.v.retests) > 0 && g.v.retests[slot] != nil}
	if cls&flagLat != 0 {
		q := &b.lat[j]
		f.Latency, f.P50Ns, f.P99Ns = true, unquant(q[1]), unquant(q[3])
	}
	if cls&flagBW != 0 {
		q := &b.bw[j]
		f.Bandwidth, f.Gbps, f.MsgRate = true, unquant(q.q[0]), unquant(q.q[1])
	}
	return true
}
