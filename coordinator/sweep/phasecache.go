package sweep

import (
	"slices"
	"sync/atomic"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// A direction's rail phases depend only on its ends' endpoints (device,
// port and GID index on each rail) and the spec's rail mode and rails, and
// a cluster's nodes have a handful of HCA layouts: at 4,096 x 8 building
// the same 8 rail pairs for 16.7 M directions was 6 of the leader's
// CPU-s, mostly cache misses on the two nodes' records. So the phases of
// each pair of layouts are planned once a sweep run and shared, read-only,
// by every pair with those layouts.

// maxLayouts is the most distinct layouts whose phases are remembered
// (their square, 256 plans); nodes past it are planned pair by pair.
const maxLayouts = 16

// phaseCache holds the phases of each pair of layouts for one spec.
type phaseCache struct {
	mode  string
	rails []int
	plans []atomic.Pointer[[][]probe.RailPair] // [src layout * maxLayouts + dst layout]
}

// numberLayouts numbers the nodes' endpoint lists in order, equal lists
// alike; a node past maxLayouts distinct ones gets -1. There are at most
// maxLayouts lists to compare a node's with.
func numberLayouts(recs []*nodeRec) {
	var layouts [][]probe.Endpoint
	for _, r := range recs {
		r.layout = slices.IndexFunc(layouts, func(l []probe.Endpoint) bool { return slices.Equal(l, r.eps) })
		if r.layout < 0 && len(layouts) < maxLayouts {
			r.layout = len(layouts)
			layouts = append(layouts, r.eps)
		}
	}
}

// phases is railPhases(pb, spec, src, dst) for c's spec, shared with every
// direction whose ends have the same layouts when c can remember them.
// Shared phases must not be written to (no caller does: splitUsable
// copies).
func (c *phaseCache) phases(pb *phaseBuf, spec *Spec, src, dst *nodeRec) [][]probe.RailPair {
	if src.layout < 0 || dst.layout < 0 {
		return railPhases(pb, *spec, src, dst)
	}
	slot := &c.plans[src.layout*maxLayouts+dst.layout]
	if p := slot.Load(); p != nil {
		return *p
	}
	// Its own buffers: pb is reused for the caller's next pair.
	p := railPhases(&phaseBuf{}, *spec, src, dst)
	slot.Store(&p)
	return p
}

// phaseCache is the cache of spec's phases over ns's nodes: the one it
// has when it was made for the same rail mode and rails, else a new one.
func (ns *Nodes) phaseCache(spec *Spec) *phaseCache {
	c := ns.cache.Load()
	if c == nil || c.mode != spec.RailMode || !slices.Equal(c.rails, spec.Rails) {
		c = &phaseCache{mode: spec.RailMode, rails: slices.Clone(spec.Rails), plans: make([]atomic.Pointer[[][]probe.RailPair], maxLayouts*maxLayouts)}
		ns.cache.Store(c)
	}
	return c
}
