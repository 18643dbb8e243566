package wire

import (
	"hash/maphash"
	"sync/atomic"
)

// interned hands out one shared string per short value a task result
// repeats: a 1,024-node sweep decodes a million results whose sweep ID, node
// names, device names and classes come from a few thousand values, and a
// fresh allocation for each was a tenth of the leader's garbage. The table
// is bounded and lock-free: a slot holds the last value hashed to it, so a
// collision costs an allocation, never a wrong string.
var internTab [1 << 12]atomic.Pointer[string]

var internSeed = maphash.MakeSeed()

const internMax = 64 // longer strings are not worth a slot

func intern(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > internMax {
		return string(b)
	}
	slot := &internTab[maphash.Bytes(internSeed, b)&(uint64(len(internTab))-1)]
	if p := slot.Load(); p != nil && *p == string(b) {
		return *p
	}
	s := string(b)
	slot.Store(&s)
	return s
}
