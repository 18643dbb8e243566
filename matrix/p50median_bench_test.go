package matrix

import (
	"math/rand"
	"testing"
	"time"
)

// BenchmarkP50ColumnMedian is a 4,096 x 8 rail's median (16.7 million
// coded p50s): counted codes against the listed p50s selected, as the
// analysis took it before.
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
