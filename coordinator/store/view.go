package store

import (
	"maps"
	"slices"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// storeView is a read-only copy of a store's state: the live store's for a
// read under the FSM lock, or a frozen one for a snapshot.
type storeView struct {
	nodes   []wire.Node
	n       int
	rails   int
	blocks  []*cellBlock
	flows   []*wire.FlowBlock
	back    []*wire.FlowBlock
	count   int
	classes []probe.Class
	errs    []*probe.Error
	retests map[int32][]wire.Attempt
	extra   map[cellKey]wire.Cell
}

// view reads the live store; valid only while the caller holds the lock.
func (s *cellStore) view() storeView {
	return storeView{nodes: s.nodes, n: s.n, rails: s.rails, blocks: s.blocks, flows: s.flows, back: s.backFlows, count: s.count,
		classes: s.classes, errs: s.errs, retests: s.retests, extra: s.extra}
}

// freeze returns a view that later writes cannot change.
func (s *cellStore) freeze() storeView {
	v := s.view()
	v.classes = slices.Clip(v.classes)
	v.errs = slices.Clip(v.errs)
	v.retests = maps.Clone(s.retests)
	v.extra = maps.Clone(s.extra)
	s.epoch++
	return v
}

// at finds grid cell (src, dst, rail): its block, its index there, its
// slot and its class byte, 0 when there is no such cell.
func (v *storeView) at(src, dst, rail int) (b *cellBlock, j int, slot int32, cls uint8) {
	if rail >= v.rails || src == dst {
		return nil, 0, 0, 0
	}
	slot = wire.GridSlot(v.n, v.rails, src, dst, rail)
	bi := int(slot) >> blockBits
	if bi >= len(v.blocks) || v.blocks[bi] == nil {
		return nil, 0, 0, 0
	}
	b, j = v.blocks[bi], int(slot)&(blockLen-1)
	return b, j, slot, b.Class[j]
}

// cell decodes grid slot (block b, index j) for the analysis. lat and bw,
// when given, are where the figures go, so a caller decoding millions of
// cells can hand out slices of one allocation.
func (v *storeView) cell(slot int32, b *cellBlock, j int, lat *probe.Latency, bw *probe.Bandwidth) matrix.Cell {
	src, d, rail := wire.GridCoords(v.n, v.rails, slot)
	cls := b.Class[j]
	c := matrix.Cell{Src: v.nodes[src].Name, Dst: v.nodes[d].Name, Rail: rail,
		SrcDevice: portDevice(&v.nodes[src], rail), DstDevice: portDevice(&v.nodes[d], rail),
		Round: int(b.Round[j]), Class: v.classes[cls&classMask-1], Flow: v.flowAt(slot), BackFlow: v.backFlowAt(slot),
		Retests: attemptsOut(v.retests[slot])}
	if b.Err != nil && b.Err[j] != 0 {
		c.Error = v.errs[b.Err[j]-1]
	}
	if cls&flagLat != 0 {
		if lat == nil {
			lat = new(probe.Latency)
		}
		*lat = b.Lat[j].Latency(b.SamplesAt(j))
		c.Latency = lat
	}
	if cls&flagBW != 0 {
		if bw == nil {
			bw = new(probe.Bandwidth)
		}
		*bw = b.BW[j].Bandwidth()
		c.Bandwidth = bw
	}
	return c
}
