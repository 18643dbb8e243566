package wire

import (
	"math"
	"sync"
)

// Measurement figures (latency ns, Gb/s, messages/s, seconds) are kept in
// the raft log and in the FSM as 16-bit codes: a 1,024-node x 8-rail sweep
// has 8.4 M cells of seven latency figures each, which as float64 would be
// 470 MB of log per sweep and as much again in memory.
//
// Codes below qExact are the whole numbers 0..16383 themselves, so integer
// figures (integer-ns timers, hand-written tests, configured rates) survive
// exactly. Every other positive figure is stored on a log scale of 1/1024
// octave between 2^-16 and 2^32: a relative error of at most 0.034%, a
// third of a nanosecond at 1 µs, below what RDMA timers resolve.
const (
	qExact   = 1 << 14
	qPerOct  = 1024
	qMinLog2 = -16
)

// Quant encodes v; negative figures and NaN (which no provider reports)
// become 0, figures past the scale saturate.
func Quant(v float64) uint16 { return quantBy(v, true) }

// quantBy is quant with (fast) or without the table path; without it is
// how every code was computed first, which the table path must match.
func quantBy(v float64, fast bool) uint16 {
	switch {
	case !(v > 0):
		return 0
	case v < qExact && float64(int64(v)) == v:
		// Not math.Trunc: without SSE4.1 (GOAMD64=v1, the default) that
		// is a function call.
		return uint16(v)
	}
	if fast {
		if c, ok := fastCode(v); ok {
			return clampCode(c)
		}
	}
	c := math.Round((math.Log2(v)-qMinLog2)*qPerOct) + qExact
	return clampCode(int(min(c, 1<<20))) // an infinite figure saturates too
}

// clampCode is a code past either end of the scale brought to that end.
func clampCode(c int) uint16 { return uint16(min(max(c, qExact), math.MaxUint16)) }

// fastCode is quant's log-scale code from integer compares instead of
// math.Log2 (which was half the cost of encoding a round): within an
// octave the code is the number of code boundaries at or below the
// mantissa, and the mantissa's top bits pick a bucket holding at most
// one boundary (qBuckets). Wherever the boundary is so close that
// math.Log2's own rounding could put it on the other side (within
// qGuard), it says !ok and quant takes the exact path, so every code is
// what math.Log2 gives (TestFastCodeExact) and every replica, old or new,
// agrees. An earlier float interpolation of a log2 table took 15 ns a
// figure, a long chain of dependent float operations; this is a load and
// two compares.
func fastCode(v float64) (int, bool) {
	bits := math.Float64bits(v)
	exp := int(bits >> 52 & 0x7ff)
	if exp == 0 || exp == 0x7ff {
		return 0, false // subnormal, infinite
	}
	mant := bits & (1<<52 - 1)
	b := &qBuckets[mant>>(52-qBucketBits)]
	k := int(b.lo)
	if b.thr != 0 {
		d := int64(mant - b.thr)
		if d > -qGuard && d < qGuard {
			return 0, false
		}
		if d >= 0 {
			k++
		}
	}
	return (exp-1023-qMinLog2)*qPerOct + k + qExact, true
}

const (
	qBucketBits = 12
	// qGuard, in units of the mantissa's last bit, is far wider than
	// math.Log2's error (a few units) and a 2^-19 share of a bucket.
	qGuard = 1 << 20
)

// qBucket is one 2^-12 slice of an octave's mantissas: the code offset
// (0..1024) at its start, lo, and the one boundary that matters to it, thr
// (0: none): lo+1 from thr on, and the exact path within qGuard of it.
// Boundaries are at least 2.77 slices apart, so that is the one inside the
// slice, or one within qGuard past its end (then no mantissa of the slice
// reaches it, but those just below it take the exact path), or one within
// qGuard before its start (then lo is one less, and thr is that boundary).
// With these constants no boundary falls that near an edge; TestQBuckets
// checks every edge against math.Log2 in case they change.
type qBucket struct {
	thr uint64
	lo  uint16
}

// qBuckets is filled at init (64 KB) from each boundary's mantissa:
// 1024*log2(1+m) = k-0.5, m = 2^((k-0.5)/1024)-1.
var qBuckets = func() *[1 << qBucketBits]qBucket {
	var t [1 << qBucketBits]qBucket
	const width = 1 << (52 - qBucketBits)
	k := 0 // boundaries at or before this bucket's start
	for i := range t {
		start := uint64(i) * width
		for qBoundary(k+1) <= start {
			k++
		}
		next := qBoundary(k + 1)
		switch {
		case k > 0 && start-qBoundary(k) < qGuard:
			t[i] = qBucket{thr: qBoundary(k), lo: uint16(k - 1)}
		case next < start+width+qGuard:
			t[i] = qBucket{thr: next, lo: uint16(k)}
		default:
			t[i] = qBucket{lo: uint16(k)}
		}
	}
	return &t
}()

// qBoundary is the mantissa at which the in-octave code steps to k
// (k = 1..1024; past 1024, beyond any mantissa).
func qBoundary(k int) uint64 {
	if k > qPerOct {
		return 1 << 53
	}
	return uint64((math.Exp2((float64(k)-0.5)/qPerOct) - 1) * (1 << 52))
}

// Unquant decodes a code: a load from a table built on first use (half a
// MB, 1.3 ms; most processes, the workers and the CLI, never decode one).
// Finding the table is a call no caller can inline: a loop that decodes
// millions of codes takes it once (UnquantTable) and indexes it itself;
// calling Unquant for each figure was, at 4,096 x 8, most of what decoding
// the leader's answers and reading the grid for the analysis cost.
func Unquant(c uint16) float64 { return quantTable()[c] }

// UnquantTable is every code's figure, indexed by code. It must not be
// written.
func UnquantTable() *[1 << 16]float64 { return quantTable() }

var quantTable = sync.OnceValue(func() *[1 << 16]float64 {
	t := new([1 << 16]float64)
	for c := range t {
		if c < qExact {
			t[c] = float64(c)
			continue
		}
		t[c] = math.Exp2(float64(c-qExact)/qPerOct + qMinLog2)
	}
	return t
})

// Quantize rounds v to what its code decodes to: what every replica and
// every reader sees once v went through the log.
func Quantize(v float64) float64 { return Unquant(Quant(v)) }
