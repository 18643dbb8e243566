package coordinator

import (
	"fmt"
	"testing"

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
