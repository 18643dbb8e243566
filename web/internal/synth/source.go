package synth

import (
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// Source is FabricWith's sweep as a matrix.FigureSource: every cell made
// on request from the same generator, so a 4,096 x 8 sweep (134 M cells)
// can be analysed as the coordinator analyses its grid, holding a byte a
// cell instead of a []Cell of 20 GB. Node indices are positions in Nodes.
type Source struct {
	g *gen
}

var _ matrix.FigureSource = (*Source)(nil)

// SourceWith is FabricWith(n, rails, f) as a Source, and its nodes.
func SourceWith(n, rails int, f Faults) ([]matrix.Node, *Source) {
	g := newGen(n, rails, f)
	return g.nodes, &Source{g: g}
}

// Rails is every rail: every node has every rail's cells.
func (s *Source) Rails() int { return s.g.rails }

// Has is true for every node and rail: FabricWith gives every (src, dst,
// rail) a cell, a dead port's included.
func (s *Source) Has(node, rail int) bool { return node < s.g.n && rail < s.g.rails }

// Fill builds the cell with figures of its own: the matrix keeps them.
func (s *Source) Fill(c *matrix.Cell, src, dst, rail int) bool {
	if !s.in(src, dst, rail) {
		return false
	}
	*c = s.g.cell(src, dst, rail, new(probe.Latency), new(probe.Bandwidth))
	return true
}

// Figures reads the same cell without keeping anything; a cell with an
// error or retests is Whole, for Fill.
func (s *Source) Figures(f *matrix.Figures, src, dst, rail int) bool {
	if !s.in(src, dst, rail) {
		return false
	}
	c, lat, bw, hasLat, hasBW := s.g.figures(src, dst, rail)
	*f = matrix.Figures{Class: c.Class, Round: c.Round, Whole: c.Error != nil || len(c.Retests) > 0}
	if hasLat {
		f.Latency, f.P50Ns, f.P99Ns, f.Samples = true, lat.P50Ns, lat.P99Ns, lat.Samples
	}
	if hasBW {
		f.Bandwidth, f.Gbps, f.MsgRate = true, bw.Gbps, bw.MsgRate
	}
	return true
}

func (s *Source) in(src, dst, rail int) bool {
	return src != dst && src >= 0 && dst >= 0 && src < s.g.n && dst < s.g.n && rail >= 0 && rail < s.g.rails
}

// MatrixFrom analyses SourceWith(n, rails, f) with the default thresholds:
// what the coordinator serves for such a sweep, at any size.
func MatrixFrom(n, rails int, f Faults) *matrix.Matrix {
	nodes, src := SourceWith(n, rails, f)
	return matrix.Analyse(nodes, src, nil, matrix.DefaultThresholds())
}
