package coordinator

import (
	"fmt"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/store"
	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

func TestEvictMatrices(t *testing.T) {
	sized := func(n int) cachedMatrix { return cachedMatrix{m: &matrix.Matrix{Cells: make([]matrix.Result, n)}} }
	cases := []struct {
		name     string
		have     []int // cells of the cached analyses
		incoming int
		keep     int
	}{
		{"room for a small one", []int{10, 20}, 30, 2},
		{"three stay beside a fourth", []int{1, 1, 1}, 1, 3},
		{"four cached: all go", []int{1, 1, 1, 1}, 1, 0},
		{"a big new one evicts the rest", []int{40, 10}, 60, 0},
		{"exactly the budget stays", []int{40}, 60, 1},
		{"nothing cached", nil, 500, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cache := map[string]cachedMatrix{}
			for i, n := range tc.have {
				cache[fmt.Sprint(i)] = sized(n)
			}
			evictMatrices(cache, tc.incoming, 100)
			if len(cache) != tc.keep {
				t.Fatalf("%d analyses kept, want %d", len(cache), tc.keep)
			}
		})
	}
}

// Readers of a running sweep get its last analysis while that is younger
// than liveMatrixAge of its build time; the leader always gets the record
// as committed, and an ended sweep is never served stale.
func TestMatrixLiveReuse(t *testing.T) {
	c := &Coordinator{fsm: store.New(5, nil), matrices: map[string]cachedMatrix{}}
	nodes := []matrix.Node{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	c.fsm.Apply(entry(t, store.Start{Info: api.SweepInfo{ID: "s", State: api.SweepRunning}, Nodes: nodes}))
	round := func(r int, src, dst string) {
		c.fsm.Apply(entry(t, sweep.RoundResult{SweepID: "s", Round: r, Cells: []matrix.Cell{okCell(src, dst, 0)}}))
	}
	tookLast := func(d time.Duration) { // as if the last build had taken d
		m := c.matrices["s"]
		m.took = d
		c.matrices["s"] = m
	}
	measured := func(m *matrix.Matrix) int { return m.NumCells() - m.Counts[matrix.VerdictUntested] }

	round(0, "a", "b")
	m1, _ := c.Matrix("s")
	round(1, "b", "a")
	tookLast(time.Hour)
	if m, _ := c.Matrix("s"); m != m1 {
		t.Fatal("a reader got a rebuild of a running sweep whose last analysis is still young")
	}
	fresh, _ := c.freshMatrix("s")
	if fresh == m1 || measured(fresh) != 2 {
		t.Fatalf("the leader got a stale analysis (%d cells measured, want 2)", measured(fresh))
	}
	round(2, "a", "c")
	tookLast(0)
	if m, _ := c.Matrix("s"); m == fresh || measured(m) != 3 {
		t.Fatal("a reader got an analysis older than its age allows")
	}
	round(3, "c", "a")
	tookLast(time.Hour)
	c.fsm.Apply(entry(t, store.End{SweepID: "s", State: api.SweepDone}))
	if m, _ := c.Matrix("s"); measured(m) != 4 {
		t.Fatalf("an ended sweep was served a stale analysis (%d cells measured, want 4)", measured(m))
	}
}
