package store

import (
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// NodeIndex places a sweep's cells in its grid; the leader's round encoder
// and the FSM's store share it, so both agree on which cells fit.
type NodeIndex struct {
	nodes []wire.Node
	idx   map[string]int32
	n     int
	rails int
	// devs is each node's device on each grid rail ("" past its ports),
	// node by node: the grid check reads one row a direction instead of
	// each node's port list, a cache miss or two a cell at 4,096 nodes.
	devs []string
	// listed is the node list lists last found to be this index's.
	listed *matrix.Node
}

// NewNodeIndex indexes a sweep's nodes as its start record lists them.
func NewNodeIndex(nodes []matrix.Node) NodeIndex { return newNodeIndex(nodesIn(nodes)) }

func newNodeIndex(nodes []wire.Node) NodeIndex {
	x := NodeIndex{nodes: nodes, idx: make(map[string]int32, len(nodes)), n: len(nodes), rails: wire.GridRails(nodes)}
	x.devs = make([]string, 0, len(nodes)*x.rails)
	for i, nd := range nodes {
		x.idx[nd.Name] = int32(i)
		for r := range x.rails {
			x.devs = append(x.devs, portDevice(&nodes[i], r))
		}
	}
	return x
}

// lists reports whether nodes are the index's own, position by position:
// names (each once) and each rail's device. Then a cell between two of
// them by position, on a rail of the grid, is placed by those positions.
// The engine hands every round the same slice, so it is compared once.
func (s *NodeIndex) lists(nodes []matrix.Node) bool {
	if len(nodes) != s.n || len(s.idx) != s.n {
		return false
	}
	if s.n == 0 || s.listed == &nodes[0] {
		return true
	}
	for i := range nodes {
		if nodes[i].Name != s.nodes[i].Name {
			return false
		}
		for r, dev := range s.devs[i*s.rails : (i+1)*s.rails] {
			if r < len(nodes[i].Ports) && nodes[i].Ports[r].Device != dev || r >= len(nodes[i].Ports) && dev != "" {
				return false
			}
		}
	}
	s.listed = &nodes[0]
	return true
}

func portDevice(n *wire.Node, rail int) string {
	if rail >= 0 && rail < len(n.Ports) {
		return n.Ports[rail].Device
	}
	return ""
}

// slotOf says where c lives in the grid, or false when it must be kept whole.
func (s *NodeIndex) slotOf(c *wire.Cell) (int32, bool) {
	si, di, ok := s.indices(c, nil)
	if !ok {
		return 0, false
	}
	return s.slot(int(si), int(di), c.Rail), true
}

// indices gives c's source and destination node indices, or false when c
// does not fit the grid. A memo (may be nil) remembers the last names
// looked up: a round's cells come a direction's rails at a time, and a
// pair's two directions one after the other.
func (s *NodeIndex) indices(c *wire.Cell, m *idxMemo) (int32, int32, bool) {
	return s.place(c.Src, c.Dst, c.SrcDevice, c.DstDevice, c.Rail, c.DstRail, c.Round, c.Latency, m)
}

// place is indices on a cell's fields, which a matrix.Cell has too: the
// round encoder reads the engine's cells where they are instead of
// converting each (a 150-byte copy a cell, 3 of the leader's CPU-s at
// 4,096 x 8).
func (s *NodeIndex) place(src, dst, srcDev, dstDev string, rail int, dstRail *int, round int, lat *probe.Latency, m *idxMemo) (int32, int32, bool) {
	if dstRail != nil && *dstRail != rail || rail < 0 || rail >= s.rails || round < 0 || round > 0xffff {
		return 0, 0, false
	}
	if m == nil {
		m = &idxMemo{}
	}
	if src != m.src.name && src == m.dst.name && dst == m.src.name && src != "" {
		// A pair's reverse direction follows its forward one.
		m.src, m.dst = m.dst, m.src
	}
	si, ok1 := m.lookup(s, &m.src, src)
	di, ok2 := m.lookup(s, &m.dst, dst)
	if !ok1 || !ok2 || si == di || srcDev != m.src.devs[rail] || dstDev != m.dst.devs[rail] {
		return 0, 0, false
	}
	if lat != nil && (lat.Samples < 0 || lat.Samples > 1<<32-1) {
		return 0, 0, false
	}
	return si, di, true
}

type idxMemo struct{ src, dst memoEntry }

type memoEntry struct {
	name string
	i    int32
	ok   bool
	devs []string // the node's row of NodeIndex.devs
}

func (*idxMemo) lookup(s *NodeIndex, e *memoEntry, name string) (int32, bool) {
	if e.name != name || name == "" {
		e.i, e.ok = s.idx[name]
		e.name = name
		if e.ok {
			e.devs = s.devs[int(e.i)*s.rails : int(e.i+1)*s.rails]
		}
	}
	return e.i, e.ok
}

func (s *NodeIndex) slot(src, dst, rail int) int32 {
	return wire.GridSlot(s.n, s.rails, src, dst, rail)
}

// key is the cellKey of a grid slot.
func (s *NodeIndex) key(slot int32) cellKey {
	src, d, rail := wire.GridCoords(s.n, s.rails, slot)
	return cellKey{Src: s.nodes[src].Name, Dst: s.nodes[d].Name, Rail: rail, DstRail: rail}
}

func (s *NodeIndex) slotOfKey(k cellKey) (int32, bool) {
	si, ok1 := s.idx[k.Src]
	di, ok2 := s.idx[k.Dst]
	if !ok1 || !ok2 || si == di || k.Rail != k.DstRail || k.Rail < 0 || k.Rail >= s.rails {
		return 0, false
	}
	return s.slot(int(si), int(di), k.Rail), true
}
