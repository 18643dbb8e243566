package web

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/rdmamesh/rdmamesh/matrix"
)

// walkChunk is how many cells a walk covers between two looks at its
// context (a compact matrix's walk takes whole sources: at least one, 32 Ki
// cells at 4,096 x 8): a few milliseconds of work, so a cancelled walk (a
// coordinator stopping, a newer sweep to prepare, a browser gone) ends
// promptly, while the look itself costs nothing next to the cells. A
// variable for tests.
var walkChunk = 1 << 14

// walkedHook, when set (tests only), is called by a walk's worker after
// each chunk of m's cells with the number of cells in it and the walk's ctx.
var walkedHook func(ctx context.Context, m *matrix.Matrix, cells int)

// each calls fn for every placeable same-rail cell, splitting the cells
// over the available cores; every worker gets its own accumulator from
// newAcc, returned for the caller to merge. fn may write shared state only
// where cells differ (a cell's own pair and rail). When ctx ends first the
// walk stops within a chunk per worker and returns ctx's error: what fn
// wrote is then partial, and the caller must drop it.
func (v *view) each(ctx context.Context, newAcc func() any, fn func(acc any, c *matrix.Result, si, dj int32)) ([]any, error) {
	if !v.m.Compact() {
		return v.split(ctx, v.m.NumCells(), walkChunk, newAcc, func(acc any) func(lo, hi int) int {
			walk := v.walkRange(func(c *matrix.Result, si, dj int32) { fn(acc, c, si, dj) })
			return func(lo, hi int) int { walk(lo, hi); return hi - lo }
		})
	}
	// A compact matrix is walked source by source, the order a
	// coordinator's store keeps its cells in (matrix.WalkFiguresFrom):
	// rail by rail, its 4,096 x 8 p50 layer took 14 s to prepare.
	nodes := len(v.m.Nodes)
	perSource := max((nodes-1)*max(v.m.Rails, 1), 1)
	return v.split(ctx, nodes, max(walkChunk/perSource, 1), newAcc, func(acc any) func(lo, hi int) int {
		return func(lo, hi int) int {
			n := 0
			v.m.WalkFiguresFrom(lo, hi, func(_, _, s, d int, c *matrix.Result) {
				n++
				fn(acc, c, int32(s), int32(d))
			})
			return n
		}
	})
}

// eachVerdict is each for a caller that needs only a cell's verdict and
// rail: a compact matrix then reads no figures.
func (v *view) eachVerdict(ctx context.Context, newAcc func() any, fn func(acc any, verdict matrix.Verdict, rail int, si, dj int32)) ([]any, error) {
	if !v.m.Compact() {
		return v.each(ctx, newAcc, func(acc any, c *matrix.Result, si, dj int32) { fn(acc, c.Verdict, c.Rail, si, dj) })
	}
	return v.split(ctx, v.m.NumCells(), walkChunk, newAcc, func(acc any) func(lo, hi int) int {
		return func(lo, hi int) int {
			v.m.WalkVerdicts(lo, hi, func(_, rail, s, d int, verdict matrix.Verdict) { fn(acc, verdict, rail, int32(s), int32(d)) })
			return hi - lo
		}
	})
}

// split walks units 0..units-1 (cells, or a compact matrix's sources) in
// chunks of chunk units over the available cores, each worker with its own
// accumulator and the walker walker(acc) makes, which returns the cells it
// walked.
func (v *view) split(ctx context.Context, units, chunk int, newAcc func() any, walker func(acc any) func(lo, hi int) int) ([]any, error) {
	workers := 1
	if v.m.NumCells() >= 1<<16 {
		workers = min(runtime.GOMAXPROCS(0), units)
	}
	accs := make([]any, workers)
	var stopped atomic.Bool
	var wg sync.WaitGroup
	for k := range workers {
		accs[k] = newAcc()
		walk := walker(accs[k])
		wg.Go(func() {
			for lo, hi := units*k/workers, units*(k+1)/workers; lo < hi; lo += chunk {
				if ctx.Err() != nil {
					stopped.Store(true)
					return
				}
				cells := walk(lo, min(lo+chunk, hi))
				if walkedHook != nil {
					walkedHook(ctx, v.m, cells)
				}
			}
		})
	}
	wg.Wait()
	if stopped.Load() {
		return nil, ctx.Err()
	}
	return accs, nil
}

// givenUp reports whether err is a walk's failure because ctx ended (see
// each), not a fault of the build's.
func givenUp(ctx context.Context, err error) bool {
	return ctx.Err() != nil && errors.Is(err, ctx.Err())
}

// walkRange returns a function calling fn for the placeable same-rail
// cells among a materialised m's cells lo..hi-1; one worker calls it on
// successive ranges.
func (v *view) walkRange(fn func(c *matrix.Result, si, dj int32)) func(lo, hi int) {
	rails := max(v.m.Rails, 0)
	cells := v.m.Cells
	w := newWalker(v) // its place carries over from one range to the next
	return func(lo, hi int) {
		for i := lo; i < hi; i++ {
			c := &cells[i]
			si, dj, ok := w.place(&c.Cell)
			if !ok || c.Rail < 0 || c.Rail >= rails || si == dj {
				continue
			}
			fn(c, si, dj)
		}
	}
}

// walker places cells of m.Cells by node index without a map lookup per
// cell: cells come sorted by rail, src, dst, so the source repeats and the
// destination is almost always the next node in name order.
type walker struct {
	v      *view
	src    string
	si, dj int32
}

func (w *walker) place(c *matrix.Cell) (si, dj int32, ok bool) {
	if w.src != c.Src || w.si < 0 {
		i, ok := w.v.byName[c.Src]
		if !ok {
			return 0, 0, false
		}
		w.src, w.si, w.dj = c.Src, i, -1
	}
	nodes := w.v.m.Nodes
	for g := w.dj + 1; g <= w.dj+2 && int(g) < len(nodes); g++ {
		if nodes[g].Name == c.Dst {
			w.dj = g
			return w.si, g, true
		}
	}
	j, ok := w.v.byName[c.Dst]
	if !ok {
		return 0, 0, false
	}
	w.dj = j
	return w.si, j, true
}

func newWalker(v *view) *walker { return &walker{v: v, si: -1, dj: -1} }
