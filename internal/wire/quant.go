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
	case v < qExact && v == math.Trunc(v):
		return uint16(v)
	}
	var c float64
	var ok bool
	if fast {
		c, ok = fastCode(v)
	}
	if !ok {
		c = math.Round((math.Log2(v)-qMinLog2)*qPerOct) + qExact
	}
	switch {
	case c < qExact:
		return qExact
	case c > math.MaxUint16:
		return math.MaxUint16
	}
	return uint16(c)
}

// fastCode is quant's log-scale code from a table instead of math.Log2,
// which was half the cost of encoding a round (57,000 figures at 1,024
// nodes). The table's error is below 1.1e-5 of a code; wherever that could
// round differently from math.Log2, within 1e-4 of a code's boundary, it
// says !ok and quant takes the exact path, so every code is what
// math.Log2 gives (TestFastCodeExact) and every replica, old or new, agrees.
func fastCode(v float64) (float64, bool) {
	bits := math.Float64bits(v)
	exp := int(bits >> 52 & 0x7ff)
	if exp == 0 || exp == 0x7ff {
		return 0, false // subnormal, infinite
	}
	mant := bits & (1<<52 - 1)
	i := mant >> (52 - log2Bits)
	t := float64(mant&(1<<(52-log2Bits)-1)) / (1 << (52 - log2Bits))
	l := log2Tab[i] + (log2Tab[i+1]-log2Tab[i])*t
	x := (float64(exp-1023)+l-qMinLog2)*qPerOct + qExact
	if !(x >= 0 && x < 1<<20) {
		return 0, false // far off the scale: quant saturates either way
	}
	whole := float64(int64(x))
	switch d := x - whole; {
	case d > 0.5-1e-4 && d < 0.5+1e-4:
		return 0, false
	case d > 0.5:
		return whole + 1, true
	}
	return whole, true
}

const log2Bits = 12

// log2Tab holds log2(1 + i/4096): linear interpolation between entries is
// within 1.1e-8 of log2, i.e. 1.1e-5 of a code. Filled at init (32 KB):
// a sync.OnceValue check per figure was a sixth of fastCode.
var log2Tab = func() *[1<<log2Bits + 1]float64 {
	var t [1<<log2Bits + 1]float64
	for i := range t {
		t[i] = math.Log2(1 + float64(i)/(1<<log2Bits))
	}
	return &t
}()

// Unquant decodes a code; a table makes it one load.
func Unquant(c uint16) float64 { return quantTable()[c] }

var quantTable = sync.OnceValue(func() *[1 << 16]float64 {
	var t [1 << 16]float64
	for c := range t {
		if c < qExact {
			t[c] = float64(c)
			continue
		}
		t[c] = math.Exp2(float64(c-qExact)/qPerOct + qMinLog2)
	}
	return &t
})

// Quantize rounds v to what its code decodes to: what every replica and
// every reader sees once v went through the log.
func Quantize(v float64) float64 { return Unquant(Quant(v)) }
