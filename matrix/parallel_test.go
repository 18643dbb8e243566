package matrix

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestAnalysisSameOnAnyCores holds the parallel passes (parallel.go) to
// one goroutine's output: random sweeps (every fault class, retests,
// baselines, coded and uncoded p50s, cells handed in and read from a
// Source) analysed on one goroutine in one stretch a rail, and on three
// and two goroutines in stretches of 64 and 128 cells, must give the same
// bytes in every output the golden files record. With -race it also finds
// two goroutines writing one word of the p50 column.
func TestAnalysisSameOnAnyCores(t *testing.T) {
	cut := 0
	for seed := int64(1); seed <= 160; seed++ {
		rng := rand.New(rand.NewSource(seed))
		nodes, cells, th := randomSweep(rng)
		var src Source
		if rng.Intn(3) != 0 {
			src, cells = splitSource(rng, nodes, cells)
		}
		var before *Matrix
		run := func(how split) string {
			m := analyse(append([]Node(nil), nodes...), src, append([]Cell(nil), cells...), th, how)
			if before == nil {
				before = healthyLike(m)
			}
			return renderGolden(t, fmt.Sprintf("seed %d", seed), &goldenRun{m: m, before: before}, true)
		}
		want := run(split{par: 1, stretch: 1 << 30})
		for _, how := range []split{{par: 3, stretch: 64}, {par: 2, stretch: 128}} {
			if got := run(how); got != want {
				t.Fatalf("seed %d, %d goroutines, stretches of %d: differs from one goroutine's: %s",
					seed, how.par, how.stretch, goldenDifference(want, got))
			}
		}
		if len(nodes) > 9 {
			cut++
		}
	}
	if cut < 40 {
		t.Fatalf("only %d sweeps had rails of more than one stretch", cut)
	}
}

// TestCellCursor walks every stretch of spans of 1 to 9 members and
// checks each cell's row and column against railSpan.at.
func TestCellCursor(t *testing.T) {
	for m := 1; m <= 9; m++ {
		sp := railSpan{members: make([]int, m), start: 5}
		for i := range sp.members {
			sp.members[i] = 2 * i
		}
		for _, size := range []int{1, 3, 64} {
			a := &analysis{stretch: size, j: &judge{}}
			seen := 0
			for _, pt := range a.stretches(&sp, 1) {
				for c := pt.cells(&sp); c.k < pt.k1; c.next() {
					if c.i == c.j || sp.at(c.i, c.j) != c.k {
						t.Fatalf("m=%d size=%d: cursor at cell %d says row %d column %d (at gives %d)", m, size, c.k, c.i, c.j, sp.at(c.i, c.j))
					}
					seen++
				}
			}
			if seen != m*(m-1) {
				t.Fatalf("m=%d size=%d: walked %d cells, want %d", m, size, seen, m*(m-1))
			}
		}
	}
}

// TestEachRaisesPanic: a panic on a pass's goroutine reaches the caller.
func TestEachRaisesPanic(t *testing.T) {
	defer func() {
		if r := recover(); r != "boom" {
			t.Fatalf("recovered %v, want boom", r)
		}
	}()
	each(2, 100, func(_, i int) {
		if i == 37 {
			panic("boom")
		}
	})
	t.Fatal("each returned")
}
