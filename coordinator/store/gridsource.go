package store

import (
	"slices"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// GridSource lets matrix.BuildFrom read a frozen store cell by cell, so the
// analysis never holds a []matrix.Cell of the whole sweep beside the
// []matrix.Result it builds (1.3 GB more at 1,024 x 8). Node indices are
// the store's, which are the sweep record's node order.
type GridSource struct {
	v   storeView
	has []bool // node*rails + rail, filled on first use
	// Figures are handed out of chunks rather than one allocation per
	// cell; the matrix keeps pointers into them.
	lats []probe.Latency
	bws  []probe.Bandwidth
	figs *[1 << 16]float64 // wire.UnquantTable, found once
}

const figureChunk = 4096

func newGridSource(v storeView) *GridSource { return &GridSource{v: v, figs: wire.UnquantTable()} }

func (g *GridSource) Rails() int {
	if g.v.blocks == nil {
		return 0
	}
	return g.v.rails
}

func (g *GridSource) Has(node, rail int) bool {
	if rail >= g.v.rails || g.v.blocks == nil {
		return false
	}
	if g.has == nil {
		g.has = g.scanHas()
	}
	return g.has[node*g.v.rails+rail]
}

// scanHas marks each (node, rail) some cell puts the node on, in one pass
// over the class bytes.
func (g *GridSource) scanHas() []bool {
	n, rails := g.v.n, g.v.rails
	has := make([]bool, n*rails)
	for bi, b := range g.v.blocks {
		if b == nil {
			continue
		}
		for j, cls := range b.Class {
			if cls == 0 {
				continue
			}
			src, d, rail := wire.GridCoords(n, rails, int32(bi<<blockBits|j))
			has[src*rails+rail], has[d*rails+rail] = true, true
		}
	}
	return has
}

func (g *GridSource) Fill(c *matrix.Cell, src, dst, rail int) bool {
	b, j, slot, cls := g.v.at(src, dst, rail)
	if cls == 0 {
		return false
	}
	var lat *probe.Latency
	var bw *probe.Bandwidth
	if cls&flagLat != 0 {
		if len(g.lats) == 0 {
			g.lats = make([]probe.Latency, figureChunk)
		}
		lat, g.lats = &g.lats[0], g.lats[1:]
	}
	if cls&flagBW != 0 {
		if len(g.bws) == 0 {
			g.bws = make([]probe.Bandwidth, figureChunk)
		}
		bw, g.bws = &g.bws[0], g.bws[1:]
	}
	*c = g.v.cell(slot, b, j, lat, bw)
	return true
}

// ExtraCells are the cells kept whole (cross-rail ones, cells outside the
// grid): BuildFrom takes them as a slice.
func (g *GridSource) ExtraCells() []matrix.Cell { return cellsOut(sortedCells(g.v.extra)) }

// EachRetested lists the cells with confirmation measurements
// (matrix.RetestSource), in slot order: few, and link localization judges
// their first measurement on its own.
func (g *GridSource) EachRetested(fn func(src, dst, rail int)) {
	slots := make([]int32, 0, len(g.v.retests))
	for s := range g.v.retests {
		slots = append(slots, s)
	}
	slices.Sort(slots)
	for _, s := range slots {
		src, dst, rail := wire.GridCoords(g.v.n, g.v.rails, s)
		fn(src, dst, rail)
	}
}
