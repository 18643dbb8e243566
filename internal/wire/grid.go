package wire

import (
	"fmt"
	"math"
)

// The grid is how a sweep's cells are laid out in round entries, in
// snapshots and in the coordinator's store: same-rail cells between the
// sweep's own nodes (as its start record lists them) have slot
// (rail*n + src)*n + dst, and their figures are quant codes. Cells that do
// not fit (cross-rail cells, unknown nodes) travel whole, as Cell.

// GridSlot is the slot of (src, dst, rail) among n nodes.
func GridSlot(n, src, dst, rail int) int32 { return int32((rail*n+src)*n + dst) }

// GridCoords is GridSlot's inverse.
func GridCoords(n int, slot int32) (src, dst, rail int) {
	sl := int(slot)
	dst, sl = sl%n, sl/n
	return sl % n, dst, sl / n
}

// GridRails is the grid's rail count: the most ports any node has.
func GridRails(nodes []Node) int {
	rails := 0
	for i := range nodes {
		rails = max(rails, len(nodes[i].Ports))
	}
	return rails
}

// CheckGrid refuses nodes whose grid a slot cannot index: a slot is an
// int32, so a sweep holds at most 2^31 cells (16,384 nodes on 8 rails).
func CheckGrid(nodes []Node) error {
	if n, rails := int64(len(nodes)), int64(GridRails(nodes)); rails*n*n > math.MaxInt32 {
		return fmt.Errorf("%d nodes on %d rails make %d cells, more than one sweep can hold (%d): select fewer nodes or rails",
			n, rails, rails*n*n, math.MaxInt32)
	}
	return nil
}

// GridBlocks is how many blocks hold the grid of n nodes and rails.
func GridBlocks(n, rails int) int { return (rails*n*n + BlockLen - 1) / BlockLen }

// A block holds BlockLen consecutive slots.
const (
	BlockBits = 6
	BlockLen  = 1 << BlockBits
)

// A cell's class byte: its class code (1..MaxClasses, an index+1 into the
// sweep's class table; 0 = no cell) and whether latency and bandwidth
// figures are present. Round entries use the same byte with a 0-based
// index into the entry's own table.
const (
	FlagLat    = 1 << 6
	FlagBW     = 1 << 7
	ClassMask  = FlagLat - 1
	MaxClasses = ClassMask
)

// LatQ holds min, p50, p90, p99, p999, max and stdev as quant codes.
type LatQ [7]uint16

// BWQ holds Gb/s, messages/s and seconds as quant codes, and the bytes.
type BWQ struct {
	Bytes int64
	Q     [3]uint16
}

// GridBlock is BlockLen slots of a sweep's grid.
type GridBlock struct {
	Class    [BlockLen]uint8
	Round    [BlockLen]uint16
	Samples  uint32            // Latency.Samples shared by the block...
	SamplesX *[BlockLen]uint32 // ...or per slot once they differ
	Lat      *[BlockLen]LatQ   // nil until a cell has latency
	BW       *[BlockLen]BWQ    // nil until a cell has bandwidth
	Err      *[BlockLen]uint16 // error codes (index+1; 0 = none); nil until a cell has one
}

// SamplesAt is slot j's latency sample count.
func (b *GridBlock) SamplesAt(j int) uint32 {
	if b.SamplesX != nil {
		return b.SamplesX[j]
	}
	return b.Samples
}
