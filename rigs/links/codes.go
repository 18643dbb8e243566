package links

import (
	"cmp"
	"math"
	"slices"
)

// maxCodes is how many p50s a 16-bit code can name.
const maxCodes = 1 << 16

// codeP50s gives the measured p50s their codes once every plane is
// filled. A code is an exact value, so the analysis reads back the same
// float64 either way; past maxCodes distinct values the most frequent
// get codes and the rest wait in the analysis's map of uncoded p50s,
// which costs it a few dozen bytes a measured cell, not a grid cell.
func (s *store) codeP50s() {
	count := map[uint64]int{}
	s.each(func(_, _ int, c *cell) {
		if c.flags&hasLat != 0 {
			count[math.Float64bits(c.p50)]++
		}
	})
	vals := make([]uint64, 0, len(count))
	for v := range count {
		vals = append(vals, v)
	}
	// Most frequent first, ties by value: the table must not depend on
	// map order, or two runs of one seed would differ in memory.
	slices.SortFunc(vals, func(a, b uint64) int {
		if c := cmp.Compare(count[b], count[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	vals = vals[:min(len(vals), maxCodes)]
	code := make(map[uint64]uint16, len(vals))
	s.p50s = make([]float64, len(vals))
	for i, v := range vals {
		code[v] = uint16(i)
		s.p50s[i] = math.Float64frombits(v)
	}
	s.each(func(_, _ int, c *cell) {
		if c.flags&hasLat == 0 {
			return
		}
		if k, ok := code[math.Float64bits(c.p50)]; ok {
			c.code, c.flags = k, c.flags|hasCode
		}
	})
}

// P50Table is what a p50 code stands for (matrix.CodedSource).
func (s *store) P50Table() []float64 { return s.p50s }
