package store

import "github.com/rdmamesh/rdmamesh/internal/wire"

// Flows live beside the blocks, not in them: a pointer more in cellBlock
// takes it past its 240-byte size class (TestCellBlockSize), a cost every
// block would pay. Beside them, a sweep whose workers report no flows
// pays nothing, and one whose cells all have flows pays 128 bytes a block
// and a pointer, about 2.1 bytes a cell. A block's flows are copied on
// write with their block (writable), so a frozen view keeps its own.

// setFlow sets the flow of cell j of block bi, which writable has just
// handed out; a zero flow allocates nothing.
func (s *cellStore) setFlow(bi, j int, flow uint16) {
	if s.flows == nil {
		if flow == 0 {
			return
		}
		s.flows = make([]*wire.FlowBlock, len(s.blocks))
	}
	f := s.flows[bi]
	if f == nil {
		if flow == 0 {
			return
		}
		f = new(wire.FlowBlock)
		s.flows[bi] = f
	}
	f[j] = flow
}

// cloneFlows gives block bi, just cloned for this epoch, flows of its own.
func (s *cellStore) cloneFlows(bi int) {
	if s.flows != nil && s.flows[bi] != nil {
		s.flows[bi] = new(*s.flows[bi])
	}
}

// flowAt is the flow of the grid cell in slot; 0 when it has none.
func (v *storeView) flowAt(slot int32) uint16 {
	bi := int(slot) >> blockBits
	if bi >= len(v.flows) || v.flows[bi] == nil {
		return 0
	}
	return v.flows[bi][int(slot)&(blockLen-1)]
}
