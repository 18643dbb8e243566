package links

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// sparseRows picks, per source, k sorted destinations (never itself): the
// shape of a fabric sweep, its leaf and a few steered peers.
func sparseRows(rng *rand.Rand, n, k int) [][]int {
	rows := make([][]int, n)
	for s := range rows {
		seen := map[int]bool{s: true}
		for len(rows[s]) < k {
			if d := rng.IntN(n); !seen[d] {
				seen[d] = true
				rows[s] = append(rows[s], d)
			}
		}
		slices.Sort(rows[s])
	}
	return rows
}

// testCell is a random cell; one in failOneIn failed.
func testCell(rng *rand.Rand, s, d, failOneIn int) matrix.Cell {
	c := matrix.Cell{Class: probe.ClassOK, Flow: uint16(s*7 + d), BackFlow: uint16(d*5 + s)}
	switch {
	case rng.IntN(failOneIn) == 0:
		c.Class = probe.ClassRetryExceeded
		c.Error = &probe.Error{Class: c.Class, Cause: fmt.Sprint(s, ">", d)}
	case rng.IntN(3) == 0:
		c.Bandwidth = &probe.Bandwidth{Gbps: rng.Float64() * 400, MsgRate: rng.Float64() * 1e6}
	default:
		// A few distinct p50s, so codes repeat.
		c.Latency = &probe.Latency{Samples: 50, P50Ns: float64(2000 + rng.IntN(5)), P99Ns: rng.Float64() * 1e4}
		c.Bandwidth = &probe.Bandwidth{Gbps: rng.Float64() * 400, MsgRate: rng.Float64() * 1e6}
	}
	return c
}

// TestSparseStore: the cells put are read back as they were, through
// Fill and Figures, every other cell reads as absent, each visits only
// the measured cells, and the all-pairs rows (found by arithmetic) read
// as the sparse ones (found by search).
func TestSparseStore(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 200
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("node-%03d", i)
	}
	st := newStore(names, 3, func(r int) string { return fmt.Sprintf("mlx5_%d", r) })
	rows := map[int][][]int{0: sparseRows(rng, n, 9)} // rail 1 unmeasured
	full := make([][]int, n)
	for s := range full {
		for d := range n {
			if d != s {
				full[s] = append(full[s], d)
			}
		}
	}
	rows[2] = full
	want := map[[3]int]matrix.Cell{}
	for rail, rs := range rows {
		p := st.addPlane(rail, func(s int) int { return len(rs[s]) })
		for s, ds := range rs {
			for _, d := range ds {
				c := testCell(rng, s, d, 4)
				p.put(s, d, &c)
				c.Src, c.Dst, c.Rail, c.SrcDevice, c.DstDevice, c.Round = names[s], names[d], rail, st.device(rail), st.device(rail), 1
				want[[3]int{s, d, rail}] = c
			}
		}
	}
	st.codeP50s()
	if len(st.p50s) != 5 {
		t.Errorf("%d p50 codes, want the 5 distinct p50s", len(st.p50s))
	}
	if st.Rails() != 3 || !st.Has(7, 0) || st.Has(7, 1) || !st.Has(7, 2) {
		t.Errorf("Rails %d; Has(7, 0..2) %v %v %v", st.Rails(), st.Has(7, 0), st.Has(7, 1), st.Has(7, 2))
	}
	for rail := range 3 {
		for s := range n {
			for d := range n {
				w, ok := want[[3]int{s, d, rail}]
				var got matrix.Cell
				var f matrix.Figures
				if st.Fill(&got, s, d, rail) != ok || st.Figures(&f, s, d, rail) != ok {
					t.Fatalf("cell %d→%d rail %d: measured %v, the store disagrees", s, d, rail, ok)
				}
				if !ok {
					continue
				}
				if !reflect.DeepEqual(got, w) {
					t.Fatalf("cell %d→%d rail %d:\n got %+v\nwant %+v", s, d, rail, got, w)
				}
				switch {
				case w.Error != nil && (!f.Whole || f.Class != w.Class):
					t.Fatalf("failed cell %d→%d: figures %+v", s, d, f)
				case w.Latency != nil && !(f.P50Coded && st.p50s[f.P50Code] == w.Latency.P50Ns && f.P99Ns == w.Latency.P99Ns):
					t.Fatalf("cell %d→%d: figures %+v, want p50 %v coded", s, d, f, w.Latency.P50Ns)
				case w.Bandwidth != nil && f.Gbps != w.Bandwidth.Gbps:
					t.Fatalf("cell %d→%d: figures %+v, want %v Gb/s", s, d, f, w.Bandwidth.Gbps)
				}
			}
		}
	}
	seen := 0
	st.each(func(s, rail int, c *cell) {
		if _, ok := want[[3]int{s, int(c.dst), rail}]; !ok {
			t.Fatalf("each visited %d→%d rail %d, never put", s, c.dst, rail)
		}
		seen++
	})
	if seen != len(want) {
		t.Errorf("each visited %d cells, %d were put", seen, len(want))
	}
}

// TestSparseStoreBytes: at 16,384 nodes a fabric sweep's plane costs its
// measured cells, not the N x N grid (12.9 GB dense).
func TestSparseStoreBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("fills half a million cells")
	}
	const n, k = 16384, 33
	names := make([]string, n)
	rng := rand.New(rand.NewPCG(1, 1))
	st := newStore(names, 1, func(int) string { return "mlx5_0" })
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p := st.addPlane(0, func(int) int { return k })
	for s := range n {
		// A leaf's 31 peers and two steered ones, in dst order.
		leaf := s / 32 * 32
		ds := []int{(s + n/2) % n, (s + n/3) % n}
		for d := leaf; d < leaf+32; d++ {
			if d != s {
				ds = append(ds, d)
			}
		}
		slices.Sort(ds)
		for _, d := range ds {
			c := matrix.Cell{Class: probe.ClassOK, Latency: &probe.Latency{P50Ns: rng.Float64()}}
			p.put(s, d, &c)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(st)
	cells := n * k
	per := float64(after.HeapAlloc-before.HeapAlloc) / float64(cells)
	if per > 50 || cellBytes != 48 {
		t.Errorf("%.1f bytes a measured cell (a cell is %d), want at most 50", per, cellBytes)
	}
	if got := planeBytes(n, cells); float64(got) < per*float64(cells) {
		t.Errorf("planeBytes %d, under the %.0f held", got, per*float64(cells))
	}
	t.Logf("%d measured cells: %.1f bytes each, %.1f MB", cells, per, per*float64(cells)/1e6)
}

// TestAnalysisBytes: the guard's estimate of the analysis holds what the
// matrix allocates to analyse a fabric sweep's store, on one rail and on
// two, and is not so far above it that the guard stops runs that fit. A
// sweep's localization allocates by its bad cells, a few here.
func TestAnalysisBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("analyses a 1,024-node grid")
	}
	const n = 1024
	rng := rand.New(rand.NewPCG(2, 3))
	names := make([]string, n)
	nodes := make([]matrix.Node, n)
	for i := range names {
		names[i] = fmt.Sprintf("node-%04d", i)
		nodes[i] = matrix.Node{Name: names[i], State: "alive"}
	}
	for _, rails := range []int{1, 2} {
		st := newStore(names, 2, func(int) string { return "mlx5_0" })
		for rail := range rails {
			rows := sparseRows(rng, n, 33)
			p := st.addPlane(rail, func(s int) int { return len(rows[s]) })
			for s, ds := range rows {
				for _, d := range ds {
					c := testCell(rng, s, d, 1000)
					p.put(s, d, &c)
				}
			}
		}
		st.codeP50s()
		th := matrix.DefaultThresholds()
		th.TestedOnly = true
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		m := matrix.Analyse(nodes, st, nil, th)
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(m)
		got, est := after.TotalAlloc-before.TotalAlloc, analysisBytes(n, rails)
		t.Logf("%d rails: the analysis allocated %.1f MB, estimated %.1f MB", rails, float64(got)/1e6, float64(est)/1e6)
		if got > est || got < est*3/4 {
			t.Errorf("%d rails: the analysis allocated %.1f MB, estimated %.1f MB", rails, float64(got)/1e6, float64(est)/1e6)
		}
	}
}
