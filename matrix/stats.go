package matrix

import "math"

// selectK returns the k-th smallest value (0-based), reordering xs so that
// no value left of k is larger and none right of it smaller. Median and
// MAD over a million cells per rail need linear time, not a sort.
func selectK(xs []float64, k int) float64 {
	floydRivest(xs, 0, len(xs)-1, k)
	return xs[k]
}

// floydRivest is Floyd and Rivest's selection (1975): before partitioning
// a long range it selects within a small sample that brackets k, so the
// pivot lands next to the answer and the range shrinks to a sliver at
// once: about 1.5 comparisons a value for a median, against 3 and more
// for quickselect. At 1,024 x 8 the analysis takes 32 M values' medians.
func floydRivest(xs []float64, left, right, k int) {
	for right > left {
		if right-left > 600 {
			n := float64(right - left + 1)
			i := float64(k - left + 1)
			z := math.Log(n)
			s := 0.5 * math.Exp(2*z/3)
			sd := 0.5 * math.Sqrt(z*s*(n-s)/n)
			if i < n/2 {
				sd = -sd
			}
			lo := max(left, int(math.Floor(float64(k)-i*s/n+sd)))
			hi := min(right, int(math.Floor(float64(k)+(n-i)*s/n+sd)))
			floydRivest(xs, lo, hi, k)
		}
		t := xs[k]
		i, j := left, right
		xs[left], xs[k] = xs[k], xs[left]
		if xs[right] > t {
			xs[right], xs[left] = xs[left], xs[right]
		}
		for i < j {
			xs[i], xs[j] = xs[j], xs[i]
			i++
			j--
			for xs[i] < t {
				i++
			}
			for xs[j] > t {
				j--
			}
		}
		if xs[left] == t {
			xs[left], xs[j] = xs[j], xs[left]
		} else {
			j++
			xs[j], xs[right] = xs[right], xs[j]
		}
		if j <= k {
			left = j + 1
		}
		if k <= j {
			right = j - 1
		}
	}
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
