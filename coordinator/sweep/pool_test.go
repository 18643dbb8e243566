package sweep

import (
	"reflect"
	"testing"

	"github.com/rdmamesh/rdmamesh/matrix"
)

// gather keeps pair order whether every pair stayed in its slab room
// (moved down in place, gaps closed, nothing stale past the end) or one
// outgrew it (copied out).
func TestRoundWorkGather(t *testing.T) {
	cell := func(s string) matrix.Cell { return matrix.Cell{Src: s} }
	srcs := func(cs []matrix.Cell) (out []string) {
		for _, c := range cs {
			out = append(out, c.Src)
		}
		return out
	}
	setup := func() *roundWork {
		w := &roundWork{at: []int{0, 3, 6, 9}, slab: make([]matrix.Cell, 9), perPair: make([][]matrix.Cell, 3)}
		for i, n := range []int{2, 0, 3} { // pair 0 short, pair 1 empty, pair 2 full
			cs := w.slab[w.at[i]:w.at[i]:w.at[i+1]]
			for j := 0; j < n; j++ {
				cs = append(cs, cell(string(rune('a'+i))+string(rune('0'+j))))
			}
			w.perPair[i] = cs
		}
		return w
	}
	want := []string{"a0", "a1", "c0", "c1", "c2"}

	w := setup()
	got := w.gather()
	if !reflect.DeepEqual(srcs(got), want) || &got[0] != &w.slab[0] {
		t.Fatalf("in place: %v (in the slab: %v), want %v", srcs(got), &got[0] == &w.slab[0], want)
	}
	for _, c := range w.slab[len(got):] {
		if c.Src != "" {
			t.Fatalf("stale cell %q left past the end", c.Src)
		}
	}

	w = setup()
	w.perPair[1] = append(w.perPair[1], cell("b0"), cell("b1"), cell("b2"), cell("b3")) // outgrows its 3
	got = w.gather()
	want = []string{"a0", "a1", "b0", "b1", "b2", "b3", "c0", "c1", "c2"}
	if !reflect.DeepEqual(srcs(got), want) {
		t.Fatalf("copied out: %v, want %v", srcs(got), want)
	}
}
