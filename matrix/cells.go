package matrix

import (
	"cmp"
	"slices"
	"sort"
)

// Reading the same-rail cells of a matrix, whether Build materialised them
// in Cells or Analyse keeps them compact: there a cell is a byte, and its
// Result is regenerated from the sweep's input when asked for.

// Compact reports whether the cells are held compactly (Cells is nil).
func (m *Matrix) Compact() bool { return m.a != nil }

// NumCells is the number of same-rail cells: len(Cells) when materialised.
func (m *Matrix) NumCells() int {
	if m.keep != nil {
		return len(m.keep)
	}
	if m.a != nil {
		return len(m.a.cells)
	}
	return len(m.Cells)
}

// VerdictAt is cell k's verdict, without materialising it.
func (m *Matrix) VerdictAt(k int) Verdict {
	if m.a != nil {
		return m.a.verdict(m.under(k))
	}
	return m.Cells[k].Verdict
}

// CellAt is cell k (0 ≤ k < NumCells), in Cells order.
func (m *Matrix) CellAt(k int) Result {
	if m.a != nil {
		return m.resultAt(m.under(k))
	}
	return m.Cells[k]
}

// under is cell k's index in a: k itself unless m is a BadOnly view.
func (m *Matrix) under(k int) int {
	if m.keep != nil {
		return int(m.keep[k])
	}
	return k
}

// EachCell calls fn with every same-rail cell in Cells order and stops at
// the first error, which it returns. r is valid only during the call (a
// compact matrix reuses it): copy what is kept.
func (m *Matrix) EachCell(fn func(k int, r *Result) error) error {
	if m.a == nil {
		for k := range m.Cells {
			if err := fn(k, &m.Cells[k]); err != nil {
				return err
			}
		}
		return nil
	}
	var r Result
	for k := range m.NumCells() {
		r = Result{}
		m.a.fill(&r, m.under(k))
		if err := fn(k, &r); err != nil {
			return err
		}
	}
	return nil
}

// Materialize returns the matrix with every cell in Cells, as Build gives
// it; m itself when it already is. At 1,024 x 8 that is 2 GB: for a page
// or an export, use CellAt, EachCell or BadOnly instead.
func (m *Matrix) Materialize() *Matrix {
	if m.a == nil {
		return m
	}
	c := *m
	c.a, c.keep = nil, nil
	c.Cells = make([]Result, m.NumCells())
	for k := range c.Cells {
		m.a.fill(&c.Cells[k], m.under(k))
	}
	return &c
}

// WalkFigures calls fn for the cells lo ≤ k < hi of a compact matrix, in
// Cells order, with the cell's rail, its two nodes' positions in m.Nodes
// and a light Result: the verdict, class, round and the figures it was
// judged by (p50, p99, the latency's samples, Gb/s, message rate; the
// best attempt after retests), but not necessarily names, devices, errors
// or the reason. It
// is what a heatmap needs, without regenerating 8 M reasons; r is reused.
// Goroutines may walk disjoint ranges at once. On a materialised matrix
// it panics: range over Cells there.
func (m *Matrix) WalkFigures(lo, hi int, fn func(k, rail, src, dst int, r *Result)) {
	a := m.compact("WalkFigures")
	a.walk(lo, hi, a.withFigures(fn))
}

// WalkFiguresFrom is WalkFigures over the cells whose source is one of
// m.Nodes[lo:hi], source by source, a destination's rails together: the
// order a coordinator's store keeps them in. Rail by rail, reading a
// 4,096 x 8 sweep's figures from the store missed the cache on most cells
// (two thirds of a walk's time). Cells come out of Cells order; k says
// where each is.
func (m *Matrix) WalkFiguresFrom(lo, hi int, fn func(k, rail, src, dst int, r *Result)) {
	a := m.compact("WalkFiguresFrom")
	a.walkFrom(lo, hi, a.withFigures(fn))
}

// withFigures is fn called with each placed cell's light Result, one
// peeker's, as WalkFigures hands them out.
func (a *analysis) withFigures(fn func(k, rail, src, dst int, r *Result)) func(k, rail, s, d int) {
	p := a.peeker()
	return func(k, rail, s, d int) {
		r := p.peek(s, d, rail)
		r.Verdict, r.Rail = a.verdict(k), rail
		fn(k, rail, s, d, r)
	}
}

// WalkVerdicts is WalkFigures for a caller that needs only each cell's
// place and verdict (the heatmap's status layer and its per-HCA counts):
// it reads no figures, which decoded from a store's codes are four
// fifths of a 4,096-node walk's time.
func (m *Matrix) WalkVerdicts(lo, hi int, fn func(k, rail, src, dst int, v Verdict)) {
	a := m.compact("WalkVerdicts")
	a.walk(lo, hi, func(k, rail, s, d int) { fn(k, rail, s, d, a.verdict(k)) })
}

func (m *Matrix) compact(op string) *analysis {
	if m.a == nil {
		panic("matrix: " + op + " on a materialised matrix")
	}
	if m.keep != nil {
		// The walks place every cell of the sweep: a view's k would not
		// be its own.
		panic("matrix: " + op + " on a BadOnly view; walk the whole matrix")
	}
	return m.a
}

// walkFrom calls fn with the index, rail and two nodes' positions of the
// cells from m.Nodes[lo:hi], source by source, then destination, then rail.
func (a *analysis) walkFrom(lo, hi int, fn func(k, rail, s, d int)) {
	rows := a.memberRows()
	for s := max(lo, 0); s < min(hi, len(a.ns)); s++ {
		for d := range a.ns {
			if d == s {
				continue
			}
			for i := range a.spans {
				sp := &a.spans[i]
				if r, c := rows[i][s], rows[i][d]; r >= 0 && c >= 0 {
					fn(sp.at(int(r), int(c)), sp.rail, s, d)
				}
			}
		}
	}
}

// memberRows is, per span, each node's index among its members (-1: not
// a member), made on first use: walkFrom places cells by it.
func (a *analysis) memberRows() [][]int32 {
	a.rowsOnce.Do(func() {
		a.rows = make([][]int32, len(a.spans))
		for i := range a.spans {
			row := make([]int32, len(a.ns))
			for k := range row {
				row[k] = -1
			}
			for j, n := range a.spans[i].members {
				row[n] = int32(j)
			}
			a.rows[i] = row
		}
	})
	return a.rows
}

// walk calls fn with the rail and the two nodes' positions of the cells
// lo ≤ k < hi, in Cells order.
func (a *analysis) walk(lo, hi int, fn func(k, rail, s, d int)) {
	if lo >= hi {
		return
	}
	si := sort.Search(len(a.spans), func(i int) bool { return a.spans[i].end() > lo })
	m1 := len(a.spans[si].members) - 1
	row, col := (lo-a.spans[si].start)/m1, (lo-a.spans[si].start)%m1
	if col >= row {
		col++
	}
	for k := lo; k < hi; k++ {
		for k >= a.spans[si].end() { // the next rail; empty ones are skipped
			si++
			row, col = 0, 1
		}
		sp := &a.spans[si]
		fn(k, sp.rail, sp.members[row], sp.members[col])
		if col++; col == row {
			col++
		}
		if col == len(sp.members) {
			row, col = row+1, 0 // row ≥ 1 now, so column 0 is not the diagonal
		}
	}
}

// CellIndex finds the same-rail cell src → dst on rail, for NumCells,
// CellAt and VerdictAt. A materialised matrix must be in Build's order; a
// BadOnly view finds only the cells it lists.
func (m *Matrix) CellIndex(rail int, src, dst string) (int, bool) {
	if m.a == nil {
		key := func(c *Result) int {
			return cmp.Or(cmp.Compare(c.Rail, rail), cmp.Compare(c.Src, src), cmp.Compare(c.Dst, dst))
		}
		i := sort.Search(len(m.Cells), func(i int) bool { return key(&m.Cells[i]) >= 0 })
		return i, i < len(m.Cells) && key(&m.Cells[i]) == 0
	}
	a := m.a
	if rail < 0 || rail >= len(a.spans) || src == dst {
		return 0, false
	}
	node := func(name string) int {
		n := sort.Search(len(a.ns), func(i int) bool { return a.ns[i].Name >= name })
		if n < len(a.ns) && a.ns[n].Name == name {
			return n
		}
		return -1
	}
	sp := &a.spans[rail]
	pos := func(n int) int {
		i := sort.SearchInts(sp.members, n)
		if n < 0 || i == len(sp.members) || sp.members[i] != n {
			return -1
		}
		return i
	}
	i, j := pos(node(src)), pos(node(dst))
	if i < 0 || j < 0 {
		return 0, false
	}
	k := sp.at(i, j)
	if m.keep == nil {
		return k, true
	}
	v, found := slices.BinarySearch(m.keep, int32(k))
	return v, found
}
