package coordinator

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

// quant encodes v; negative figures and NaN (which no provider reports)
// become 0, figures past the scale saturate.
func quant(v float64) uint16 {
	switch {
	case !(v > 0):
		return 0
	case v < qExact && v == math.Trunc(v):
		return uint16(v)
	}
	c := math.Round((math.Log2(v)-qMinLog2)*qPerOct) + qExact
	switch {
	case c < qExact:
		return qExact
	case c > math.MaxUint16:
		return math.MaxUint16
	}
	return uint16(c)
}

// unquant decodes a code; a table makes it one load.
func unquant(c uint16) float64 { return quantTable()[c] }

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

// quantize rounds v to what its code decodes to: what every replica and
// every reader sees once v went through the log.
func quantize(v float64) float64 { return unquant(quant(v)) }
