package store

import (
	"testing"
	"unsafe"
)

// TestCellBlockSize: a block is one allocation of every grid's 64 cells'
// class and round; at 240 bytes it is a size class of its own, where 248
// bytes took 256 (a quarter byte a cell more, 34 MB at 4,096 x 8).
func TestCellBlockSize(t *testing.T) {
	if n := unsafe.Sizeof(cellBlock{}); n > 240 {
		t.Fatalf("cellBlock is %d bytes: past the 240-byte size class", n)
	}
	var b cellBlock
	for range blockLen {
		b.hasLat++
	}
	if int(b.hasLat) != blockLen {
		t.Fatalf("hasLat cannot count a full block's %d cells (got %d)", blockLen, b.hasLat)
	}
}
