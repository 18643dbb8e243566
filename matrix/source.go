package matrix

import "sync"

// Source hands BuildFrom a sweep's same-rail cells one at a time from
// wherever they are kept, so a caller holding millions of them compactly
// (the coordinator's grid) never materialises them all as a []Cell: at
// 1,024 x 8 that slice is 1.3 GB, three seconds to decode and most of
// what the garbage collector scanned during the analysis. Node indices
// are positions in the nodes handed to BuildFrom.
type Source interface {
	// Rails is one more than the highest rail any of its cells is on.
	Rails() int
	// Has reports whether some cell puts the node on the rail.
	Has(node, rail int) bool
	// Fill sets *c to the cell src → dst on rail and reports whether
	// there is one, leaving *c alone when not; Build keeps the pointers
	// in c (figures, errors), so they must not change afterwards.
	Fill(c *Cell, src, dst, rail int) bool
}

// cellGrid is where Build looks cells up: the cells it was handed (by
// index), then the Source. Indices here are into the sorted nodes; orig
// maps them back to the Source's.
type cellGrid struct {
	idx   *cellIndex
	cells []Cell
	src   Source
	figs  FigureSource // src, when it is one
	orig  []int
	rails int
	mu    sync.Mutex // Source.Fill need not be safe for concurrent use
}

func (g *cellGrid) fill(c *Cell, s, d, rail int) bool {
	if rail < g.idx.rails {
		if i := g.idx.find(s, d, rail); i >= 0 {
			*c = g.cells[i]
			return true
		}
	}
	return g.src != nil && g.fillSource(c, s, d, rail)
}

func (g *cellGrid) fillSource(c *Cell, s, d, rail int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.src.Fill(c, g.orig[s], g.orig[d], rail)
}

// p50Table is the source's p50 code table, nil when it has none.
func (g *cellGrid) p50Table() []float64 {
	if c, ok := g.src.(CodedSource); ok {
		return c.P50Table()
	}
	return nil
}

func (g *cellGrid) has(i, rail int) bool {
	if rail < g.idx.rails && g.idx.has[i*g.idx.rails+rail] {
		return true
	}
	return g.src != nil && g.src.Has(g.orig[i], rail)
}
