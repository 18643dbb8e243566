package probe

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSummarize(t *testing.T) {
	cases := []struct {
		name    string
		in      []float64
		min     float64
		p50     float64
		p99     float64
		max     float64
		samples int
	}{
		{"empty", nil, 0, 0, 0, 0, 0},
		{"one", []float64{7}, 7, 7, 7, 7, 1},
		{"unsorted", []float64{5, 1, 4, 2, 3}, 1, 3, 5, 5, 5},
		{"hundred", seq(100), 1, 50, 99, 100, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Summarize(c.in)
			if got.Samples != c.samples || got.MinNs != c.min || got.P50Ns != c.p50 ||
				got.P99Ns != c.p99 || got.MaxNs != c.max {
				t.Fatalf("got %+v", got)
			}
		})
	}
}

func seq(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[n-1-i] = float64(i + 1)
	}
	return out
}

func TestParamsValidate(t *testing.T) {
	good := DefaultTestParams()
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := good
	bad.LatencyIters = 0
	if err := bad.Validate(); err == nil {
		t.Fatal("zero iterations accepted")
	}
	bad = good
	bad.BWSize = 0
	bad.TxDepth = 0
	if err := bad.Validate(); err != nil {
		t.Fatalf("bandwidth skipped should not need tx_depth: %v", err)
	}
}

// TestSummarizeMatchesSorting checks the selection against the sort-based
// definition on shapes that trip quickselects: duplicates, runs, sorted and
// reversed input, sizes around the small-range cut-off.
func TestSummarizeMatchesSorting(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 2, 3, 15, 16, 17, 33, 100, 999, 1000, 1001, 4096} {
		for shape := range 5 {
			in := make([]float64, n)
			for i := range in {
				switch shape {
				case 0:
					in[i] = rng.NormFloat64()
				case 1:
					in[i] = float64(rng.IntN(3))
				case 2:
					in[i] = float64(i)
				case 3:
					in[i] = float64(n - i)
				default:
					in[i] = 7
				}
			}
			sorted := slices.Sorted(slices.Values(in))
			got := Summarize(slices.Clone(in))
			at := func(q float64) float64 { return sorted[max(int(math.Ceil(q*float64(n)))-1, 0)] }
			if got.MinNs != sorted[0] || got.MaxNs != sorted[n-1] || got.P50Ns != at(0.5) || got.P90Ns != at(0.9) ||
				got.P99Ns != at(0.99) || got.P999Ns != at(0.999) {
				t.Fatalf("n=%d shape %d: got %+v, sorted min %v p50 %v p90 %v p99 %v p999 %v max %v", n, shape, got,
					sorted[0], at(0.5), at(0.9), at(0.99), at(0.999), sorted[n-1])
			}
		}
	}
}

func BenchmarkSummarize1000(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	in := make([]float64, 1000)
	for i := range in {
		in[i] = 1000 + 30*rng.NormFloat64()
	}
	buf := make([]float64, len(in))
	b.ReportAllocs()
	for b.Loop() {
		copy(buf, in)
		Summarize(buf)
	}
}
