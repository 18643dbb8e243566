package wire

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestQuant(t *testing.T) {
	for _, v := range []float64{0, 1, 900, 1000, 16383} {
		if got := Quantize(v); got != v {
			t.Errorf("whole number %v came back as %v", v, got)
		}
	}
	for _, v := range []float64{1e-4, 0.5, 1.5, 999.37, 1043.2847, 16384, 123456.7, 3.9e9, 390.25, 7e5} {
		got := Quantize(v)
		if rel := math.Abs(got-v) / v; rel > 0.00034 {
			t.Errorf("%v came back as %v: relative error %.5f%%", v, got, rel*100)
		}
		if Quant(got) != Quant(v) {
			t.Errorf("%v: code not stable under re-encoding", v)
		}
	}
	if Quant(-1) != 0 || Quant(math.NaN()) != 0 || Quant(math.Inf(1)) != math.MaxUint16 || Quant(1e-9) != qExact {
		t.Error("out-of-range figures must map to 0 or saturate")
	}
}

// Every stored figure must read back the same after another trip through
// the log (a retest merge, a snapshot), or replicas would drift.
func TestQuantStable(t *testing.T) {
	for c := 0; c <= math.MaxUint16; c++ {
		v := Unquant(uint16(c))
		if Quantize(v) != v {
			t.Fatalf("code %d: %v re-encodes to %v", c, v, Quantize(v))
		}
	}
}

// quantRef is quant as first written (math.Log2 for every figure): the
// codes in existing logs and snapshots, and what older replicas compute.
func quantRef(v float64) uint16 { return quantBy(v, false) }

// TestFastCodeExact holds quant's table path to the reference, on random
// figures across the whole scale and on each code's rounding boundaries
// (where the two computations are closest to disagreeing).
func TestFastCodeExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	check := func(v float64) {
		if got, want := Quant(v), quantRef(v); got != want {
			t.Fatalf("Quant(%v) = %d, reference %d", v, got, want)
		}
	}
	for range 2_000_000 {
		check(math.Exp2(rng.Float64()*56 - 20))
	}
	for range 200_000 {
		check(900 + rng.Float64()*400) // where latencies are
	}
	for c := 0; c < 1<<16; c++ {
		mid := math.Exp2((float64(c)+0.5-qExact)/qPerOct + qMinLog2)
		for _, v := range []float64{mid, math.Nextafter(mid, 0), math.Nextafter(mid, math.Inf(1)), mid * (1 + 1e-9), mid * (1 - 1e-9)} {
			check(v)
		}
	}
	for _, v := range []float64{math.Inf(1), math.SmallestNonzeroFloat64, math.MaxFloat64, 16383.5, 16384, 1e-300} {
		check(v)
	}
}

// Quant takes its table path nearly always, and matches the reference at
// the edges of every table bucket, in octaves across the scale (a
// boundary near an edge is where a bucket could misplace a mantissa).
func TestQBuckets(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	slow := 0
	for range 1_000_000 {
		if _, ok := fastCode(math.Exp2(rng.Float64()*40 - 10)); !ok {
			slow++
		}
	}
	if slow > 10 {
		t.Errorf("%d of a million figures took the exact path", slow)
	}
	const width = 1 << (52 - qBucketBits)
	for _, exp := range []uint64{1023 - 16, 1023, 1023 + 10, 1023 + 31} {
		for i := uint64(0); i <= 1<<qBucketBits; i++ {
			for _, d := range []int64{-qGuard - 1, -2, -1, 0, 1, 2, qGuard + 1} {
				m := int64(i*width) + d
				if m < 0 || m >= 1<<52 {
					continue
				}
				v := math.Float64frombits(exp<<52 | uint64(m))
				if got, want := Quant(v), quantRef(v); got != want {
					t.Fatalf("Quant(%v) = %d, reference %d (bucket %d%+d)", v, got, want, i, d)
				}
			}
		}
	}
}

func BenchmarkQuant(b *testing.B) {
	vs := make([]float64, 4096)
	for i := range vs {
		vs[i] = 990 + float64(i)*0.37
	}
	b.ReportAllocs()
	var sum int
	for i := 0; b.Loop(); i++ {
		sum += int(Quant(vs[i%len(vs)]))
	}
	_ = sum
}
