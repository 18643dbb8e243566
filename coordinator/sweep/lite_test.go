package sweep

import (
	"testing"
	"unsafe"
)

// A lite cell's flows sit in padding: the leader holds one a plain cell
// between the answer and the round's commit, a million a sweep.
func TestLiteCellSize(t *testing.T) {
	if n := unsafe.Sizeof(LiteCell{}); n != 32 {
		t.Fatalf("LiteCell is %d bytes, want 32", n)
	}
}
