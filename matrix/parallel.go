package matrix

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// The analysis passes run on every core: on one, the end of a 4,096 x 8
// sweep waited 29 s for them with the other core idle. A rail is cut into
// stretches of cells whose bounds are multiples of 64, so no two
// goroutines write one word of the p50 column's bitsets, and whatever a
// stretch gathers is joined back in stretch order: every median and
// every tie sees its values in the order one goroutine would have given
// them, so the output does not depend on the cores (parallel_test.go).

// stretchCells is how many cells a stretch has at most: a multiple of 64,
// small enough that two cores share a rail's stretches evenly, large
// enough that handing them out costs nothing.
const stretchCells = 1 << 16

// stretch is cells k0..k1-1 of one rail's span, with what its passes
// gather until they are joined: its part of the rail's population
// figures, its spread sample and its rail tally.
type stretch struct {
	k0, k1 int
	pop    gather
	sample spreadSample
	rail   rollTally
}

// stretches cuts the span of the rail begun (judge.begin) at the
// multiples of the analysis's stretch size, each sampling every stride-th
// cell.
func (a *analysis) stretches(sp *railSpan, stride int) []stretch {
	size := a.stretch
	if size <= 0 {
		size = stretchCells
	}
	var out []stretch
	for k0, end := sp.start, sp.end(); k0 < end; {
		k1 := min(end, (k0/size+1)*size)
		out = append(out, stretch{k0: k0, k1: k1, pop: a.j.part(k0-sp.start, k1-sp.start),
			sample: spreadSample{stride: stride}})
		k0 = k1
	}
	return out
}

// workers is how many goroutines run a pass.
func (a *analysis) workers() int {
	if a.par > 0 {
		return a.par
	}
	return runtime.GOMAXPROCS(0)
}

// cellCursor walks a span's cells in cell order: k the cell, i and j its
// row's and column's positions among the span's members.
type cellCursor struct{ k, i, j, m int }

// cells is a cursor at the stretch's first cell.
func (pt *stretch) cells(sp *railSpan) cellCursor {
	m1 := len(sp.members) - 1
	o := pt.k0 - sp.start
	c := cellCursor{k: pt.k0, i: o / m1, j: o % m1, m: len(sp.members)}
	if c.j >= c.i {
		c.j++ // the diagonal has no cell
	}
	return c
}

func (c *cellCursor) next() {
	c.k++
	c.j++
	if c.j == c.i {
		c.j++
	}
	if c.j == c.m {
		c.i, c.j = c.i+1, 0 // row i > 0 starts at column 0
	}
}

// each runs fn(worker, i) for i in 0..n-1 on up to w goroutines, worker
// telling the goroutine's own scratch, and returns when all have run. A
// panic in fn is raised again here, where a caller can recover it.
func each(w, n int, fn func(worker, i int)) {
	if w = min(w, n); w <= 1 {
		for i := range n {
			fn(0, i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var raised any
	for wi := range w {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					once.Do(func() { raised = r })
					next.Store(int64(n)) // the others stop at their next item
				}
			}()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(wi, i)
			}
		})
	}
	wg.Wait()
	if raised != nil {
		panic(raised)
	}
}
