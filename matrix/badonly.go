package matrix

// BadOnly returns m with only the cells whose verdict is not ok, in Cells
// and Cross; everything else (counts, rollups, suspects, healthy) is the
// whole sweep's. A 1,024 x 8 matrix is 4.3 GB of JSON, nearly all of it ok
// cells that a pass/fail gate, its exclude list and its NCCL settings never
// read. CellsOmitted says how many were left out. m is not changed; the
// copy shares its nodes, suspects and results.
//
// A compact m gives a compact view: it lists its bad cells' places (4
// bytes each) and NumCells, CellAt, EachCell and the exports read them
// from the sweep as they go. Materialised, the bad cells of a 1,024 x 8
// fabric with a rail down on every node take 242 MB of heap, 16x that at
// 4,096 x 8 (16.7 M cells) on a coordinator held to 5 GiB; listed, they
// are 67 MB there.
func (m *Matrix) BadOnly() *Matrix {
	c := *m
	c.Cross = badResults(m.Cross)
	if m.a == nil {
		c.Cells = badResults(m.Cells)
	} else {
		c.keep = m.badPlaces()
	}
	c.CellsOmitted = m.CellsOmitted + m.NumCells() - c.NumCells() + len(m.Cross) - len(c.Cross)
	return &c
}

// badPlaces are the places in m.a of m's cells whose verdict is not ok,
// in Cells order; empty, not nil, when there is none.
func (m *Matrix) badPlaces() []int32 {
	out := []int32{}
	for k := range m.NumCells() {
		if u := m.under(k); m.a.verdict(u) != VerdictOK {
			out = append(out, int32(u))
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
// sends every bad cell: a rail down on every node of a 4,096 x 8 fabric
// is 16.7 M cells, 8 GB of JSON (504 MB at 1,024), and a cross-rail sweep
// with a rail down has millions of bad cross-rail cells too, for a gate
// that reads none.
func (m *Matrix) SummaryOnly() *Matrix {
	c := *m
	c.a, c.keep = nil, nil
	c.Cells, c.Cross = []Result{}, nil
	c.CellsOmitted = m.CellsOmitted + m.NumCells() + len(m.Cross)
	return &c
}
