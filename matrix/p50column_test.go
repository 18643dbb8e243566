package matrix

import (
	"math"
	"math/rand"
	"testing"
	"time"
)

// TestP50ColumnMedian: a coded column's median, from code counts, is the
// median of its p50s listed, to the bit, for ranges with odd and even
// counts, only coded p50s (even trials) or p50s without a code among them
// (odd ones), values tied across codes and others, and no p50 at all.
func TestP50ColumnMedian(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	table := make([]float64, 600)
	for i := range table {
		table[i] = float64(rng.Intn(400)) + 0.5 // ties between codes; not in code order
	}
	table[7] = math.NaN() // no p50 is ever this code
	for trial := range 300 {
		n := 1 + rng.Intn(200)
		c := newP50Column(n, table)
		for k := range n {
			var f figs
			switch rng.Intn(5) {
			case 0: // no p50
			case 1: // a p50 without a code, sometimes equal to a code's
				if trial%2 == 0 {
					break
				}
				f.hasP, f.p50 = true, float64(rng.Intn(400))+0.5*float64(rng.Intn(2))
			default:
				code := uint16(8 + rng.Intn(len(table)-8))
				f.hasP, f.p50, f.coded, f.code = true, table[code], true, code
			}
			c.set(k, &f)
		}
		from := rng.Intn(n)
		to := from + rng.Intn(n-from+1)
		want := median(c.appendValid(nil, from, to))
		var scratch []float64
		if got := c.median(&scratch, from, to); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("trial %d, cells %d..%d: median %v, listed %v", trial, from, to, got, want)
		}
		if trial%2 == 0 && len(scratch) > 0 {
			t.Fatalf("trial %d: %d p50s without a code in a trial without them", trial, len(scratch))
		}
	}
}

// BenchmarkP50ColumnMedian is a 4,096 x 8 rail's median (16.7 million
// coded p50s): counting the codes against selecting among the p50s
// listed.
func BenchmarkP50ColumnMedian(b *testing.B) {
	const n = 4096 * 4095
	table := make([]float64, 1<<16)
	for i := range table {
		table[i] = float64(i) * 0.37
	}
	c := newP50Column(n, table)
	rng := rand.New(rand.NewSource(1))
	for k := range n {
		code := uint16(2700 + rng.Intn(200))
		c.set(k, &figs{hasP: true, p50: table[code], coded: true, code: code})
	}
	var scratch []float64
	var counted, listed time.Duration
	for b.Loop() {
		t := time.Now()
		got := c.median(&scratch, 0, n)
		counted += time.Since(t)
		t = time.Now()
		want := median(c.appendValid(scratch[:0], 0, n))
		listed += time.Since(t)
		if got != want {
			b.Fatalf("median %v, listed %v", got, want)
		}
	}
	b.ReportMetric(counted.Seconds()/float64(b.N), "counted-s")
	b.ReportMetric(listed.Seconds()/float64(b.N), "listed-s")
}
