package matrix

import (
	"math/rand"
	"slices"
	"testing"
)

func TestSelectAndMedian(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for n := 1; n < 200; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(rng.Intn(20)) // many ties: the hard case for partitioning
		}
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		k := rng.Intn(n)
		if got := selectK(slices.Clone(xs), k); got != sorted[k] {
			t.Fatalf("n=%d: selectK(%d) = %v, want %v", n, k, got, sorted[k])
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
