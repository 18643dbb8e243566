package matrix

import (
	"math/rand"
	"slices"
	"testing"
)

func TestSelectAndMedian(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	sizes := []int{}
	for n := 1; n < 200; n++ {
		sizes = append(sizes, n)
	}
	// Past 600 values the selection samples first: sizes around it, and
	// big ones with ties, sorted, reversed and continuous values.
	sizes = append(sizes, 600, 601, 602, 603, 1000, 1001, 4096, 20000, 20001)
	for c, n := range sizes {
		xs := make([]float64, n)
		for i := range xs {
			switch c % 4 {
			case 0:
				xs[i] = float64(rng.Intn(20)) // many ties: the hard case for partitioning
			case 1:
				xs[i] = rng.NormFloat64()
			case 2:
				xs[i] = float64(i / 3)
			default:
				xs[i] = float64(n - i)
			}
		}
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		k := rng.Intn(n)
		part := slices.Clone(xs)
		if got := selectK(part, k); got != sorted[k] {
			t.Fatalf("n=%d: selectK(%d) = %v, want %v", n, k, got, sorted[k])
		}
		for i, v := range part {
			if (i < k && v > sorted[k]) || (i > k && v < sorted[k]) {
				t.Fatalf("n=%d: selectK(%d) left %v at %d", n, k, v, i)
			}
		}
		want := sorted[n/2]
		if n%2 == 0 {
			want = (sorted[n/2-1] + sorted[n/2]) / 2
		}
		if got := median(slices.Clone(xs)); got != want {
			t.Fatalf("n=%d: median %v, want %v", n, got, want)
		}
	}
	if median(nil) != 0 {
		t.Fatal("median of nothing")
	}
}

func TestRobustStats(t *testing.T) {
	xs := []float64{10, 10, 11, 9, 10, 10, 12, 8, 100}
	r := robustStats(xs)
	if !r.ok || r.med != 10 || r.scale != 1.4826 || r.z(100) < 60 {
		t.Fatalf("%+v", r)
	}
	if r := robustStats([]float64{1, 2, 3}); r.ok {
		t.Fatal("three values judged by MAD")
	}
	same := []float64{1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}
	if r := robustStats(same); r.scale != 10 {
		t.Fatalf("floor: %+v", r)
	}
}
