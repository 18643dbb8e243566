package matrix

import (
	"math"
	"math/rand"
	"testing"
)

// TestP50ColumnMedian: a coded column's median, from code counts, is the
// median of its p50s listed, to the bit, for ranges with odd and even
// counts, p50s without a code among them, values tied across codes and
// others, and no p50 at all.
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
	}
}
