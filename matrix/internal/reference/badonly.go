package reference

// BadOnly returns m with only the cells whose verdict is not ok, in Cells
// and Cross; everything else (counts, rollups, suspects, healthy) is the
// whole sweep's. A 1,024 x 8 matrix is 4.3 GB of JSON, nearly all of it ok
// cells that a pass/fail gate, its exclude list and its NCCL settings never
// read. CellsOmitted says how many were left out. m is not changed; the
// copy shares its nodes, suspects and results.
func (m *Matrix) BadOnly() *Matrix {
	c := *m
	c.Cells, c.Cross = badResults(m.Cells), badResults(m.Cross)
	c.CellsOmitted = m.CellsOmitted + len(m.Cells) - len(c.Cells) + len(m.Cross) - len(c.Cross)
	return &c
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
