package matrix

import (
	"math/rand"
	"slices"
	"testing"
)

// The compact accessors agree with the materialised cells: WalkFigures over
// any range gives each cell's place, verdict and judged figures, WalkVerdicts
// the same places and verdicts, WalkFiguresFrom the same cells source by
// source, and CellIndex finds every cell (and nothing else) in both forms.
func TestCompactAccessors(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewSource(seed))
		nodes, cells, th := randomSweep(rng)
		c := Analyse(nodes, nil, cells, th)
		m := c.Materialize()
		n := c.NumCells()
		if n != len(m.Cells) || !c.Compact() || m.Compact() {
			t.Fatalf("seed %d: %d compact cells, %d materialised", seed, n, len(m.Cells))
		}
		lo := 0
		if n > 0 {
			lo = rng.Intn(n)
		}
		next := lo
		c.WalkFigures(lo, n, func(k, rail, s, d int, r *Result) {
			want := &m.Cells[k]
			if k != next || rail != want.Rail || c.Nodes[s].Name != want.Src || c.Nodes[d].Name != want.Dst ||
				r.Verdict != want.Verdict || r.Class != want.Class {
				t.Fatalf("seed %d: cell %d (next %d) walked as rail %d %s→%s %s/%s, want %+v", seed, k, next, rail,
					c.Nodes[s].Name, c.Nodes[d].Name, r.Verdict, r.Class, want)
			}
			if a, b := figuresOf(r), figuresOf(want); a != b {
				t.Fatalf("seed %d: cell %d figures %v, want %v", seed, k, a, b)
			}
			next++
		})
		if next != n {
			t.Fatalf("seed %d: walked to %d of %d", seed, next, n)
		}
		next = lo
		c.WalkVerdicts(lo, n, func(k, rail, s, d int, v Verdict) {
			want := &m.Cells[k]
			if k != next || rail != want.Rail || c.Nodes[s].Name != want.Src || c.Nodes[d].Name != want.Dst || v != want.Verdict {
				t.Fatalf("seed %d: cell %d (next %d) walked as rail %d %s→%s %s, want %+v", seed, k, next, rail,
					c.Nodes[s].Name, c.Nodes[d].Name, v, want)
			}
			next++
		})
		if next != n {
			t.Fatalf("seed %d: walked verdicts to %d of %d", seed, next, n)
		}
		// By source: every cell from the range's sources once, source,
		// then destination, then rail, each as the materialised cell.
		from, to := 0, len(c.Nodes)
		if to > 0 {
			from = rng.Intn(to)
			to = from + rng.Intn(to-from+1)
		}
		seen := map[int]bool{}
		var last [3]int
		c.WalkFiguresFrom(from, to, func(k, rail, s, d int, r *Result) {
			want := &m.Cells[k]
			if seen[k] || rail != want.Rail || c.Nodes[s].Name != want.Src || c.Nodes[d].Name != want.Dst ||
				r.Verdict != want.Verdict || r.Class != want.Class || figuresOf(r) != figuresOf(want) {
				t.Fatalf("seed %d: cell %d (seen %v) walked from its source as rail %d %s→%s %s/%s %v, want %+v", seed, k, seen[k], rail,
					c.Nodes[s].Name, c.Nodes[d].Name, r.Verdict, r.Class, figuresOf(r), want)
			}
			if at := [3]int{s, d, rail}; len(seen) > 0 && slices.Compare(at[:], last[:]) <= 0 {
				t.Fatalf("seed %d: cell %v walked after %v", seed, at, last)
			} else {
				last = at
			}
			seen[k] = true
		})
		for k := range m.Cells {
			x := &m.Cells[k]
			if inRange := slices.IndexFunc(c.Nodes[from:to], func(n Node) bool { return n.Name == x.Src }) >= 0; inRange != seen[k] {
				t.Fatalf("seed %d: cell %d %s→%s rail %d walked %v, its source in nodes %d..%d %v", seed, k, x.Src, x.Dst, x.Rail, seen[k], from, to, inRange)
			}
		}
		for k := range m.Cells {
			x := &m.Cells[k]
			for _, mm := range []*Matrix{c, m} {
				if i, ok := mm.CellIndex(x.Rail, x.Src, x.Dst); !ok || i != k {
					t.Fatalf("seed %d: CellIndex(%d, %s, %s) = %d %v, want %d", seed, x.Rail, x.Src, x.Dst, i, ok, k)
				}
			}
		}
		if _, ok := c.CellIndex(0, "stranger", nodes[0].Name); ok {
			t.Fatalf("seed %d: found a cell of an unknown node", seed)
		}
	}
}

func figuresOf(r *Result) [4]float64 {
	var f [4]float64
	if r.Latency != nil {
		f[0], f[1] = r.Latency.P50Ns, r.Latency.P99Ns
	}
	if r.Bandwidth != nil {
		f[2], f[3] = r.Bandwidth.Gbps, r.Bandwidth.MsgRate
	}
	return f
}
