package reference

import "math"

// selectK returns the k-th smallest value (0-based), reordering xs. Median
// and MAD over a million cells per rail need linear time, not a sort.
func selectK(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		// Median of three keeps sorted input (common: cells arrive in
		// order of similar figures) from degrading to quadratic time.
		mid := lo + (hi-lo)/2
		if xs[mid] < xs[lo] {
			xs[mid], xs[lo] = xs[lo], xs[mid]
		}
		if xs[hi] < xs[lo] {
			xs[hi], xs[lo] = xs[lo], xs[hi]
		}
		if xs[hi] < xs[mid] {
			xs[hi], xs[mid] = xs[mid], xs[hi]
		}
		pivot := xs[mid]
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}

// median reorders xs; callers pass a scratch slice they own.
func median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	hi := selectK(xs, n/2)
	if n%2 == 1 {
		return hi
	}
	// After selectK(n/2) everything left of n/2 is <= hi: the lower middle
	// is their maximum.
	lo := xs[0]
	for _, v := range xs[1 : n/2] {
		lo = max(lo, v)
	}
	return (lo + hi) / 2
}

// robust is a rail's centre and spread for the robust z-score: the median
// and 1.4826 x the median absolute deviation (the standard deviation, for
// normal data, without letting the bad cells widen it).
type robust struct {
	med, scale float64
	ok         bool
}

const (
	// minRobustCells: with fewer cells the MAD is too coarse to judge by.
	minRobustCells = 8
	// madFloor keeps a tight rail (all cells within 0.1%) from calling a 1%
	// wobble twenty sigmas: the spread is taken as at least 1% of the median,
	// about the run-to-run noise of a p50 or a bandwidth figure.
	madFloor = 0.01
)

// robustStats reorders xs.
func robustStats(xs []float64) robust {
	if len(xs) < minRobustCells {
		return robust{}
	}
	med := median(xs)
	for i, v := range xs {
		xs[i] = math.Abs(v - med)
	}
	mad := median(xs)
	return robust{med: med, scale: max(1.4826*mad, madFloor*math.Abs(med)), ok: med != 0}
}

// z is how many spreads v lies above the centre (negative: below).
func (r robust) z(v float64) float64 { return (v - r.med) / r.scale }
