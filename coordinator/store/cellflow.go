package store

import "github.com/rdmamesh/rdmamesh/internal/wire"

// Flows live beside the blocks, not in them: a pointer more in cellBlock
// takes it past its 240-byte size class (TestCellBlockSize), a cost every
// block would pay. Beside them, a sweep whose workers report no flows
// pays nothing, and one whose cells all have flows pays 128 bytes a block
// and a pointer, about 2.1 bytes a cell, for each of flows and back flows.
// The two are allocated apart, so a sweep that knows one direction's
// ports only (a provider that reports its own QP's port but not the
// responder's) pays for that one alone. A block's flows are copied on
// write with their block (writable), so a frozen view keeps its own.

// setFlows sets the flow and back flow of cell j of block bi, which
// writable has just handed out; a zero flow allocates nothing.
func (s *cellStore) setFlows(bi, j int, flow, back uint16) {
	setFlow(&s.flows, len(s.blocks), bi, j, flow)
	setFlow(&s.backFlows, len(s.blocks), bi, j, back)
}

// setFlow sets cell j of block bi in *fs, n blocks long once allocated.
func setFlow(fs *[]*wire.FlowBlock, n, bi, j int, flow uint16) {
	if *fs == nil {
		if flow == 0 {
			return
		}
		*fs = make([]*wire.FlowBlock, n)
	}
	f := (*fs)[bi]
	if f == nil {
		if flow == 0 {
			return
		}
		f = new(wire.FlowBlock)
		(*fs)[bi] = f
	}
	f[j] = flow
}

// cloneFlows gives block bi, just cloned for this epoch, flows of its own.
func (s *cellStore) cloneFlows(bi int) {
	for _, fs := range [...][]*wire.FlowBlock{s.flows, s.backFlows} {
		if fs != nil && fs[bi] != nil {
			fs[bi] = new(*fs[bi])
		}
	}
}

// restoreFlows sets block i's flows in *fs from a snapshot's, allocating
// nothing while it has none.
func restoreFlows(fs *[]*wire.FlowBlock, from []*wire.FlowBlock, i int) {
	if from != nil && from[i] != nil {
		if *fs == nil {
			*fs = make([]*wire.FlowBlock, len(from))
		}
		(*fs)[i] = from[i]
	}
}

// flowAt is the flow of the grid cell in slot; 0 when it has none.
func (v *storeView) flowAt(slot int32) uint16 { return flowIn(v.flows, slot) }

// backFlowAt is its back flow; 0 when it has none.
func (v *storeView) backFlowAt(slot int32) uint16 { return flowIn(v.back, slot) }

func flowIn(fs []*wire.FlowBlock, slot int32) uint16 {
	bi := int(slot) >> blockBits
	if bi >= len(fs) || fs[bi] == nil {
		return 0
	}
	return fs[bi][int(slot)&(blockLen-1)]
}
