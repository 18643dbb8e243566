package probe

import (
	"math"
	"slices"
)

// Summarize reduces one-way latency samples (ns) to the figures perftest
// prints. It reorders samples in place; callers hand over a buffer they own.
//
// The percentiles are found by selection, not by sorting: a sweep
// summarises millions of sample sets (8.4 M at 1,024 nodes x 8 rails), and
// sorting 1,000 samples costs ten times what selecting four ranks does.
func Summarize(samples []float64) Latency {
	n := len(samples)
	if n == 0 {
		return Latency{}
	}
	lo, hi, sum := samples[0], samples[0], 0.0
	for _, s := range samples {
		lo, hi, sum = min(lo, s), max(hi, s), sum+s
	}
	mean := sum / float64(n)
	var sq float64
	for _, s := range samples {
		sq += (s - mean) * (s - mean)
	}
	l := Latency{Samples: n, MinNs: lo, MaxNs: hi, StdevNs: math.Sqrt(sq / float64(n))}
	// Ascending ranks: each selection leaves everything above its rank to
	// the right, so the next one searches only there.
	from := 0
	for _, q := range []struct {
		p   float64
		dst *float64
	}{{0.50, &l.P50Ns}, {0.90, &l.P90Ns}, {0.99, &l.P99Ns}, {0.999, &l.P999Ns}} {
		k := rank(n, q.p)
		if k >= from {
			selectNth(samples[from:], k-from)
			from = k
		}
		*q.dst = samples[k]
	}
	return l
}

// rank is the nearest-rank index perftest uses for its 99% figures, so our
// p99 and ib_write_lat's are comparable.
func rank(n int, q float64) int {
	return max(int(math.Ceil(q*float64(n)))-1, 0)
}

// selectNth reorders a so that a[k] holds the value a sorted a would have
// there, nothing larger before it and nothing smaller after it
// (Hoare's quickselect, median-of-three pivots; small or stubborn ranges
// are sorted).
func selectNth(a []float64, k int) {
	for depth := 0; len(a) > 16; depth++ {
		if depth > 64 {
			slices.Sort(a)
			return
		}
		m := len(a) / 2
		// Median of three to a[m], the pivot.
		if a[m] < a[0] {
			a[0], a[m] = a[m], a[0]
		}
		if a[len(a)-1] < a[0] {
			a[0], a[len(a)-1] = a[len(a)-1], a[0]
		}
		if a[len(a)-1] < a[m] {
			a[m], a[len(a)-1] = a[len(a)-1], a[m]
		}
		p := a[m]
		i, j := 0, len(a)-1
		for i <= j {
			for a[i] < p {
				i++
			}
			for a[j] > p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		// Now a[:j+1] <= p <= a[i:], and a[j+1:i] == p.
		switch {
		case k <= j:
			a = a[:j+1]
		case k >= i:
			a, k = a[i:], k-i
		default:
			return
		}
	}
	slices.Sort(a)
}
