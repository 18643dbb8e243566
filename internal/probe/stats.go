package probe

import (
	"math"
	"sort"
)

// Summarize reduces one-way latency samples (ns) to the figures perftest
// prints. It sorts samples in place; callers hand over a buffer they own.
func Summarize(samples []float64) Latency {
	n := len(samples)
	if n == 0 {
		return Latency{}
	}
	sort.Float64s(samples)
	var sum float64
	for _, s := range samples {
		sum += s
	}
	mean := sum / float64(n)
	var sq float64
	for _, s := range samples {
		sq += (s - mean) * (s - mean)
	}
	return Latency{
		Samples: n,
		MinNs:   samples[0],
		P50Ns:   quantile(samples, 0.50),
		P90Ns:   quantile(samples, 0.90),
		P99Ns:   quantile(samples, 0.99),
		P999Ns:  quantile(samples, 0.999),
		MaxNs:   samples[n-1],
		StdevNs: math.Sqrt(sq / float64(n)),
	}
}

// quantile uses the nearest-rank method, as perftest does for its 99%
// figures, so our p99 and ib_write_lat's are comparable.
func quantile(sorted []float64, q float64) float64 {
	rank := int(math.Ceil(q*float64(len(sorted)))) - 1
	if rank < 0 {
		rank = 0
	}
	return sorted[rank]
}
