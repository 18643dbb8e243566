package wire

import (
	"fmt"
	"math"
)

// The grid is how a sweep's cells are laid out in snapshots and in the
// coordinator's store: same-rail cells between the sweep's own nodes (as
// its start record lists them) have a slot, and their figures are quant
// codes. Cells that do not fit (cross-rail cells, unknown nodes) travel
// whole, as Cell.
//
// A slot is ((src*n8/8 + dst/8)*rails + rail)*8 + dst%8, with n8 the node
// count rounded up to a multiple of 8: eight destinations of one rail side
// by side, then the next rail's same eight. One direction of a pair then
// writes all its rails into one 64-slot block (on 8 rails), so a round's
// FSM writes touch an eighth of the blocks a rail-major layout would, and a
// reading of one rail still gets eight consecutive cells at a time.

// gridGroup is how many destinations of one rail sit side by side.
const gridGroup = 8

// gridRow is the slots one source's destinations span on one rail: n
// rounded up to a whole group.
func gridRow(n int) int { return (n + gridGroup - 1) &^ (gridGroup - 1) }

// GridSlot is the slot of (src, dst, rail) among n nodes and rails rails.
func GridSlot(n, rails, src, dst, rail int) int32 {
	return int32(((src*(gridRow(n)/gridGroup)+dst/gridGroup)*rails+rail)*gridGroup + dst%gridGroup)
}

// GridCoords is GridSlot's inverse. A slot past the last destination of a
// row (the padding of a node count that is not a multiple of 8) gives a
// dst ≥ n: InGrid tells those apart.
func GridCoords(n, rails int, slot int32) (src, dst, rail int) {
	sl := int(slot)
	low, g := sl%gridGroup, sl/gridGroup
	rail, g = g%rails, g/rails
	groups := gridRow(n) / gridGroup
	return g / groups, g%groups*gridGroup + low, rail
}

// GridSlots is how many slots the grid of n nodes and rails has, padding
// included.
func GridSlots(n, rails int) int { return n * gridRow(n) * rails }

// InGrid reports whether slot is a cell's slot: in range, and not padding.
func InGrid(n, rails int, slot int32) bool {
	if slot < 0 || int(slot) >= GridSlots(n, rails) {
		return false
	}
	_, dst, _ := GridCoords(n, rails, slot)
	return dst < n
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
// int32, so a sweep holds at most 2^31 slots, 0 to MaxInt32 (16,384 nodes
// on 8 rails exactly).
func CheckGrid(nodes []Node) error {
	if n, rails := len(nodes), GridRails(nodes); int64(rails)*int64(n)*int64(gridRow(n)) > maxSlots {
		return fmt.Errorf("%d nodes on %d rails make %d cells, more than one sweep can hold (%d): select fewer nodes or rails",
			n, rails, int64(rails)*int64(n)*int64(n), int64(maxSlots))
	}
	return nil
}

const maxSlots = math.MaxInt32 + 1

// GridBlocks is how many blocks hold the grid of n nodes and rails.
func GridBlocks(n, rails int) int { return (GridSlots(n, rails) + BlockLen - 1) / BlockLen }

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

// FlowBlock is the flows of a GridBlock's cells (the initiator QP's UDP
// source port, or for back flows the responder QP's; 0 = unknown). It is
// kept beside its block rather than in it: one pointer more takes the
// store's block past its 240-byte size class, a cost every block would
// pay where only flows need the room.
type FlowBlock [BlockLen]uint16

// SetSamples gives slot j, a cell whose latency is being written, v
// samples: the block keeps one count while its cells with latency agree
// (others: some other cell of the block has latency), and one a slot once
// they differ.
func (b *GridBlock) SetSamples(j int, v uint32, others bool) {
	switch {
	case b.SamplesX != nil:
		b.SamplesX[j] = v
	case !others || b.Samples == v:
		b.Samples = v
	default:
		b.SamplesX = new([BlockLen]uint32)
		for i := range b.SamplesX {
			b.SamplesX[i] = b.Samples
		}
		b.SamplesX[j] = v
	}
}

// SamplesAt is slot j's latency sample count.
func (b *GridBlock) SamplesAt(j int) uint32 {
	if b.SamplesX != nil {
		return b.SamplesX[j]
	}
	return b.Samples
}
