package matrix

// BadOnly returns m with only the cells whose verdict is not ok, in Cells
// and Cross; everything else (counts, rollups, suspects, healthy) is the
// whole sweep's. A 1,024 x 8 matrix is 4.3 GB of JSON, nearly all of it ok
// cells that a pass/fail gate, its exclude list and its NCCL settings never
// read. CellsOmitted says how many were left out. m is not changed; the
// copy shares its nodes, suspects and results.
func (m *Matrix) BadOnly() *Matrix {
	c := *m
	c.a = nil
	c.Cells, c.Cross = m.badCells(), badResults(m.Cross)
	c.CellsOmitted = m.CellsOmitted + m.NumCells() - len(c.Cells) + len(m.Cross) - len(c.Cross)
	return &c
}

// badCells are the same-rail cells whose verdict is not ok; a compact
// matrix materialises only those.
func (m *Matrix) badCells() []Result {
	if m.a == nil {
		return badResults(m.Cells)
	}
	out := []Result{}
	for k := range m.a.cells {
		if m.a.verdict(k) != VerdictOK {
			out = append(out, m.CellAt(k))
		}
	}
	return out
}

func badResults(rs []Result) []Result {
	if rs == nil {
		return nil
	}
	out := []Result{}
	for i := range rs {
		if rs[i].Verdict != VerdictOK {
			out = append(out, rs[i])
		}
	}
	return out
}

// SummaryOnly returns m as BadOnly does but without any cell: the counts
// (CrossCounts too), rollups, suspects and verdict of the whole sweep.
// Everything a pass/fail gate, its exclude list, host file and NCCL
// settings read, in a size that does not grow with the cells. BadOnly
// materialises every bad cell: a rail down on every node of a 4,096 x 8
// fabric is 16.7 M cells, 6.6 GB on the coordinator and 8 GB of JSON
// (416 MB and 504 MB at 1,024), and a cross-rail sweep with a rail down
// has millions of bad cross-rail cells too, for a gate that reads none.
func (m *Matrix) SummaryOnly() *Matrix {
	c := *m
	c.a = nil
	c.Cells, c.Cross = []Result{}, nil
	c.CellsOmitted = m.CellsOmitted + m.NumCells() + len(m.Cross)
	return &c
}
