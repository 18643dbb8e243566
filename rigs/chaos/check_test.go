package chaos

import (
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

func TestCount(t *testing.T) {
	ok := func(src, dst string, rail int) matrixCell {
		return matrixCell{Src: src, Dst: dst, Rail: rail, Class: "ok", Verdict: "ok"}
	}
	full := []matrixCell{ok("a", "b", 0), ok("b", "a", 0), ok("a", "b", 1), ok("b", "a", 1)}
	cases := []struct {
		name      string
		cells     []matrixCell
		cellsDone int
		lost, dup int
	}{
		{"complete", full, 4, 0, 0},
		{"one untested", append(full[:3:3], matrixCell{Src: "b", Dst: "a", Rail: 1, Verdict: "untested"}), 3, 1, 0},
		{"one missing", full[:3], 3, 1, 0},
		{"one repeated", append(full[:4:4], ok("a", "b", 0)), 4, 0, 1},
		{"counted past the plan", full, 5, 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			info := api.SweepInfo{Cells: 4, CellsDone: tc.cellsDone}
			got := count(info, matrixView{Cells: tc.cells})
			if got.lost != tc.lost || got.dup != tc.dup {
				t.Fatalf("lost %d dup %d, want %d and %d (%s)", got.lost, got.dup, tc.lost, tc.dup, got)
			}
		})
	}
}

func TestDurs(t *testing.T) {
	d := durs{3 * time.Second, time.Second, 2 * time.Second, 4 * time.Second}
	if d.median() != 2500*time.Millisecond || d.max() != 4*time.Second {
		t.Fatalf("median %s max %s", d.median(), d.max())
	}
	if (durs{}).median() != 0 || (durs{}).max() != 0 {
		t.Fatal("empty durs")
	}
}
