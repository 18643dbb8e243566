package matrix

import (
	"cmp"
	"math"
	"slices"
	"sync"
)

// p50Column keeps every same-rail cell's p50 from the first pass until the
// node medians, the largest buffer of the analysis: 8 bytes a cell as
// float64s, 1.07 GB at 4,096 x 8 on top of the grid and the verdicts. A
// CodedSource's p50s are 16-bit codes into one table (the coordinator's
// quantisation), so for such a source the column keeps the code, a valid
// bit and an "other" bit: 2.25 bytes a cell. A p50 that came without a
// code (a cell read whole, a cell of the list handed in) waits in other.
// Either way at(k) gives back exactly the float64 the first pass read.
type p50Column struct {
	f64 []float64 // the plain form, when the source has no codes

	codes []uint16
	table []float64
	valid []uint64 // bit k: cell k has a p50
	isOth []uint64 // bit k: it is in other, not in codes
	other map[int]float64
	mu    sync.Mutex // other, while the first pass's goroutines set cells

	hist  []uint32 // median's code counts
	order []uint16 // the codes in the order of their values (median)
}

func newP50Column(n int, table []float64) *p50Column {
	if len(table) == 0 {
		f := make([]float64, n)
		for i := range f {
			f[i] = math.NaN()
		}
		return &p50Column{f64: f}
	}
	words := (n + 63) / 64
	return &p50Column{codes: make([]uint16, n), table: table, valid: make([]uint64, words),
		isOth: make([]uint64, words), other: map[int]float64{}}
}

// set records cell k's p50 from the first pass's figures. Goroutines may
// set cells at once if no two of them set cells of one 64-cell word.
func (c *p50Column) set(k int, f *figs) {
	if c.f64 != nil {
		c.f64[k] = orNaN(f.p50, f.hasP)
		return
	}
	if !f.hasP {
		return // bits start clear: no p50
	}
	w, bit := k>>6, uint64(1)<<(k&63)
	c.valid[w] |= bit
	if f.coded && int(f.code) < len(c.table) && c.table[f.code] == f.p50 {
		c.codes[k] = f.code
		return
	}
	c.isOth[w] |= bit
	c.mu.Lock()
	c.other[k] = f.p50
	c.mu.Unlock()
}

// at is cell k's p50, NaN when it has none.
func (c *p50Column) at(k int) float64 {
	if c.f64 != nil {
		return c.f64[k]
	}
	w, bit := k>>6, uint64(1)<<(k&63)
	switch {
	case c.valid[w]&bit == 0:
		return math.NaN()
	case c.isOth[w]&bit != 0:
		return c.other[k]
	}
	return c.table[c.codes[k]]
}

// appendValid appends the p50s of cells from..to-1 that have one.
func (c *p50Column) appendValid(dst []float64, from, to int) []float64 {
	if c.f64 != nil {
		return appendValid(dst, c.f64[from:to])
	}
	for k := from; k < to; k++ {
		w, bit := k>>6, uint64(1)<<(k&63)
		switch {
		case c.valid[w]&bit == 0:
		case c.isOth[w]&bit != 0:
			dst = append(dst, c.other[k])
		default:
			dst = append(dst, c.table[c.codes[k]])
		}
	}
	return dst
}

// median is median(appendValid(nil, from, to)), scratch its room. A coded
// column counts its codes rather than listing and selecting every p50: a
// rail's median at 4,096 x 8 listed 16.7 million of them (134 MB) and
// selected among them on one core, between the parallel passes.
func (c *p50Column) median(scratch *[]float64, from, to int) float64 {
	if c.f64 != nil {
		*scratch = appendValid((*scratch)[:0], c.f64[from:to])
		return median(*scratch)
	}
	if c.hist == nil {
		c.hist = make([]uint32, len(c.table))
	}
	clear(c.hist)
	others, n := (*scratch)[:0], 0
	for k := from; k < to; k++ {
		w, bit := k>>6, uint64(1)<<(k&63)
		switch {
		case c.valid[w]&bit == 0:
			continue
		case c.isOth[w]&bit != 0:
			others = append(others, c.other[k])
		default:
			c.hist[c.codes[k]]++
		}
		n++
	}
	*scratch = others
	if n == 0 {
		return 0
	}
	slices.Sort(others)
	hi := c.nth(others, n/2)
	if n%2 == 1 {
		return hi
	}
	return (c.nth(others, n/2-1) + hi) / 2
}

// nth is the i-th smallest (from 0) of the counted codes' values and
// others, sorted.
func (c *p50Column) nth(others []float64, i int) float64 {
	if c.order == nil {
		c.order = make([]uint16, len(c.table))
		for k := range c.order {
			c.order[k] = uint16(k)
		}
		slices.SortFunc(c.order, func(a, b uint16) int { return cmp.Compare(c.table[a], c.table[b]) })
	}
	o := 0
	for _, code := range c.order {
		v := c.table[code]
		for ; o < len(others) && others[o] < v; o++ {
			if i == 0 {
				return others[o]
			}
			i--
		}
		n := int(c.hist[code])
		if i < n {
			return v
		}
		i -= n
	}
	return others[o+i]
}
