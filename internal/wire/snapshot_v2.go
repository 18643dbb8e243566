package wire

import (
	"cmp"
	"slices"
)

// Snapshot versions 1 and 2 laid the grid out rail by rail: slot
// (rail*n + src)*n + dst. A reader checks such a grid against that layout
// and then moves its cells to today's slots, so that nothing past the
// reader knows the old one.

// gridLayout is what a reader checks a sweep's grid against.
type gridLayout struct {
	n, rails  int
	railMajor bool
}

func (g gridLayout) blocks() int {
	if g.railMajor {
		return (g.rails*g.n*g.n + BlockLen - 1) / BlockLen
	}
	return GridBlocks(g.n, g.rails)
}

// valid reports whether slot can hold a cell.
func (g gridLayout) valid(slot int32) bool {
	if g.railMajor {
		return slot >= 0 && int(slot) < g.rails*g.n*g.n
	}
	return InGrid(g.n, g.rails, slot)
}

// holds reports whether every cell of block bi has a valid slot.
func (g gridLayout) holds(b *GridBlock, bi int) bool {
	for j, c := range b.Class {
		if c != 0 && !g.valid(int32(bi*BlockLen+j)) {
			return false
		}
	}
	return true
}

// gridCoordsV2 is the (src, dst, rail) of a rail-major slot.
func gridCoordsV2(n int, slot int32) (src, dst, rail int) {
	sl := int(slot)
	dst, sl = sl%n, sl/n
	return sl % n, dst, sl / n
}

// relayout moves a checked rail-major grid, and its cells' retest
// attempts, to today's slots.
func relayout(s *SnapshotSweep, n, rails int) {
	move := func(slot int32) int32 {
		src, dst, rail := gridCoordsV2(n, slot)
		return GridSlot(n, rails, src, dst, rail)
	}
	for i := range s.Attempts {
		s.Attempts[i].Slot = move(s.Attempts[i].Slot)
	}
	slices.SortFunc(s.Attempts, func(a, b SlotAttempts) int { return cmp.Compare(a.Slot, b.Slot) })
	if s.Blocks == nil {
		return
	}
	out := make([]*GridBlock, GridBlocks(n, rails))
	for bi, b := range s.Blocks {
		if b == nil {
			continue
		}
		for j, c := range b.Class {
			if c == 0 {
				continue
			}
			to := move(int32(bi*BlockLen + j))
			nb := out[to>>BlockBits]
			if nb == nil {
				nb = &GridBlock{}
				out[to>>BlockBits] = nb
			}
			moveCell(nb, int(to)&(BlockLen-1), b, j)
		}
	}
	s.Blocks = out
}

// moveCell copies cell j of from into slot k of to.
func moveCell(to *GridBlock, k int, from *GridBlock, j int) {
	c := from.Class[j]
	if c&FlagLat != 0 {
		if to.Lat == nil {
			to.Lat = new([BlockLen]LatQ)
		}
		to.Lat[k] = from.Lat[j]
		to.SetSamples(k, from.SamplesAt(j), slices.ContainsFunc(to.Class[:], func(c uint8) bool { return c&FlagLat != 0 }))
	}
	if c&FlagBW != 0 {
		if to.BW == nil {
			to.BW = new([BlockLen]BWQ)
		}
		to.BW[k] = from.BW[j]
	}
	if from.Err != nil && from.Err[j] != 0 {
		if to.Err == nil {
			to.Err = new([BlockLen]uint16)
		}
		to.Err[k] = from.Err[j]
	}
	to.Class[k], to.Round[k] = c, from.Round[j]
}
