package wire

import (
	"hash/maphash"
	"sync/atomic"
)

// interned hands out one shared string per short value a task result
// repeats: a 1,024-node sweep decodes a million results whose sweep ID, node
// names, device names and classes come from a few thousand values, and a
// fresh allocation for each was a tenth of the leader's garbage. The table
// is bounded and lock-free: a collision costs an allocation, never a wrong
// string.
//
// It is two-way: a value may sit in either slot of its pair, the newer
// first. A 4,096-node sweep repeats about 8,200 values (names and API
// addresses); with one slot per hash in a 4,096-slot table most of them
// evicted each other, and every decode of them allocated (3.4 of 532
// CPU-s in a 4,096 profile, and garbage). In 65,536 slots (512 KB) about
// 97% of them keep their place (TestInternHoldsA4096NodeSweep); the rest
// share a pair with two others.
var internTab [1 << 16]atomic.Pointer[string]

var internSeed = maphash.MakeSeed()

const internMax = 64 // longer strings are not worth a slot

func intern(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > internMax {
		return string(b)
	}
	i := maphash.Bytes(internSeed, b) & (uint64(len(internTab)) - 2) // the pair's first slot
	first, second := &internTab[i], &internTab[i+1]
	p := first.Load()
	if p != nil && *p == string(b) {
		return *p
	}
	if q := second.Load(); q != nil && *q == string(b) {
		return *q
	}
	s := string(b)
	// The newest value goes first and the one it displaces second, so two
	// values that share a pair are both kept however they alternate. Racing
	// writers can lose a value; a lookup then allocates, nothing worse.
	if p != nil {
		second.Store(p)
	}
	first.Store(&s)
	return s
}
