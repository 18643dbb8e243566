package matrix

// Reading the same-rail cells of a matrix, whether Build materialised them
// in Cells or Analyse keeps them compact: there a cell is a byte, and its
// Result is regenerated from the sweep's input when asked for.

// Compact reports whether the cells are held compactly (Cells is nil).
func (m *Matrix) Compact() bool { return m.a != nil }

// NumCells is the number of same-rail cells: len(Cells) when materialised.
func (m *Matrix) NumCells() int {
	if m.a != nil {
		return len(m.a.cells)
	}
	return len(m.Cells)
}

// VerdictAt is cell k's verdict, without materialising it.
func (m *Matrix) VerdictAt(k int) Verdict {
	if m.a != nil {
		return m.a.verdict(k)
	}
	return m.Cells[k].Verdict
}

// CellAt is cell k (0 ≤ k < NumCells), in Cells order.
func (m *Matrix) CellAt(k int) Result {
	if m.a != nil {
		var r Result
		m.a.fill(&r, k)
		return r
	}
	return m.Cells[k]
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
	for k := range m.a.cells {
		r = Result{}
		m.a.fill(&r, k)
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
	c.a = nil
	c.Cells = make([]Result, len(m.a.cells))
	for k := range c.Cells {
		m.a.fill(&c.Cells[k], k)
	}
	return &c
}
