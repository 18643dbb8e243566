package links

import (
	"sort"
	"unsafe"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// store holds a run's measured cells in compact form and hands them to
// the matrix as a matrix.CodedSource. As matrix.Cell values with their
// figures a cell is 264 bytes on the heap, full of pointers; here it is
// 48 bytes without pointers, so the collector never scans them. A cell
// keeps what the analysis reads (matrix.Figures, the flows, the error of
// a failed test); Fill rebuilds the rest of the Cell from the names.
//
// Only measured cells are kept, per source in dst order. A fabric sweep
// measures about 33 cells a node and rail, so at 16,384 nodes a plane is
// 26 MB where a dense N x N plane was 12.9 GB. The all-pairs pattern
// uses the same store: its rows are full, so a cell is found by
// arithmetic as in a dense plane (at), and the destination fits in what
// was padding, so neither pattern pays for the other.
type store struct {
	names  []string
	device func(rail int) string
	planes []*plane // by rail; nil: not measured
	// p50s is the code table (matrix.CodedSource): the analysis then keeps
	// 2.25 bytes a cell of the whole N x N grid for the p50s instead of 8,
	// and at 16,384 nodes that grid is 268 M cells a rail.
	p50s []float64
}

// plane is one rail's measured cells: rows[src] in ascending dst.
type plane struct {
	n    int
	rows [][]cell
	errs [][]cellErr // by source: its failed cells, in dst order
}

type cell struct {
	p50, p99, gbps, rate float64
	dst                  int32
	samples              int32
	flow, backFlow       uint16
	code                 uint16 // into store.p50s, when hasCode
	flags                uint8
}

const (
	hasLat uint8 = 1 << iota
	hasBW
	failed
	hasCode
)

// cellBytes is a measured cell's size in a plane.
const cellBytes = uint64(unsafe.Sizeof(cell{}))

type cellErr struct {
	dst int32
	err *probe.Error
}

func newStore(names []string, rails int, device func(int) string) *store {
	return &store{names: names, device: device, planes: make([]*plane, rails)}
}

// planeBytes is what a plane of n nodes and the given measured cells
// holds before any test failed: the cells (one allocation, rounded up to
// a page), two slice headers a node.
func planeBytes(n, cells int) uint64 { return uint64(cells)*cellBytes + 8<<10 + uint64(n)*48 }

// addPlane makes rail's plane with room for rowLen(src) cells a source,
// in one allocation: each row is its own window of it, so rows filled
// from several goroutines never share a slice header.
func (s *store) addPlane(rail int, rowLen func(src int) int) *plane {
	n := len(s.names)
	total := 0
	for i := range n {
		total += rowLen(i)
	}
	all := make([]cell, total)
	p := &plane{n: n, rows: make([][]cell, n), errs: make([][]cellErr, n)}
	off := 0
	for i := range n {
		k := rowLen(i)
		p.rows[i] = all[off : off : off+k]
		off += k
	}
	s.planes[rail] = p
	return p
}

// put records cell src → dst. Each source's row has one writer, and its
// cells come in ascending dst order, which the lookups rely on.
func (p *plane) put(src, dst int, c *matrix.Cell) {
	row := p.rows[src]
	if len(row) > 0 && int(row[len(row)-1].dst) >= dst {
		panic("links: cells put out of dst order")
	}
	f := cell{dst: int32(dst), flow: c.Flow, backFlow: c.BackFlow}
	if c.Latency != nil {
		f.flags |= hasLat
		f.p50, f.p99, f.samples = c.Latency.P50Ns, c.Latency.P99Ns, int32(c.Latency.Samples)
	}
	if c.Bandwidth != nil {
		f.flags |= hasBW
		f.gbps, f.rate = c.Bandwidth.Gbps, c.Bandwidth.MsgRate
	}
	if c.Class != probe.ClassOK {
		f.flags |= failed
		p.errs[src] = append(p.errs[src], cellErr{dst: int32(dst), err: c.Error})
	}
	p.rows[src] = append(row, f)
}

func (p *plane) errAt(src, dst int) *probe.Error {
	row := p.errs[src]
	i := sort.Search(len(row), func(i int) bool { return int(row[i].dst) >= dst })
	if i < len(row) && int(row[i].dst) == dst {
		return row[i].err
	}
	return nil
}

func (s *store) at(src, dst, rail int) (*plane, *cell) {
	if rail < 0 || rail >= len(s.planes) || s.planes[rail] == nil || src == dst {
		return nil, nil
	}
	p := s.planes[rail]
	row := p.rows[src]
	if len(row) == p.n-1 { // every pair measured: no search
		return p, &row[dst-b2i(dst > src)]
	}
	// The analysis asks for every cell of the N x N grid, ~97 % of them
	// unmeasured in a fabric sweep: most fall outside the row's range.
	if len(row) == 0 || dst < int(row[0].dst) || dst > int(row[len(row)-1].dst) {
		return nil, nil
	}
	lo, hi := 0, len(row)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if int(row[m].dst) < dst {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(row) && int(row[lo].dst) == dst {
		return p, &row[lo]
	}
	return nil, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Rails is one more than the highest measured rail.
func (s *store) Rails() int {
	for r := len(s.planes) - 1; r >= 0; r-- {
		if s.planes[r] != nil {
			return r + 1
		}
	}
	return 0
}

// Has: a measured plane has every node, as each node of it was tested
// (a fabric sweep tests every node with its leaf).
func (s *store) Has(_, rail int) bool {
	return rail >= 0 && rail < len(s.planes) && s.planes[rail] != nil
}

func (s *store) Figures(f *matrix.Figures, src, dst, rail int) bool {
	p, c := s.at(src, dst, rail)
	if c == nil {
		return false
	}
	if c.flags&failed != 0 {
		*f = matrix.Figures{Class: p.errAt(src, dst).Class, Round: 1, Whole: true}
		return true
	}
	*f = matrix.Figures{Class: probe.ClassOK, Round: 1,
		Latency: c.flags&hasLat != 0, P50Ns: c.p50, P99Ns: c.p99, Samples: int(c.samples),
		Bandwidth: c.flags&hasBW != 0, Gbps: c.gbps, MsgRate: c.rate,
		P50Coded: c.flags&hasCode != 0, P50Code: c.code}
	return true
}

func (s *store) Fill(out *matrix.Cell, src, dst, rail int) bool {
	p, c := s.at(src, dst, rail)
	if c == nil {
		return false
	}
	dev := s.device(rail)
	*out = matrix.Cell{Src: s.names[src], Dst: s.names[dst], Rail: rail, SrcDevice: dev, DstDevice: dev, Round: 1,
		Class: probe.ClassOK, Flow: c.flow, BackFlow: c.backFlow}
	if c.flags&failed != 0 {
		out.Error = p.errAt(src, dst)
		out.Class = out.Error.Class
	}
	if c.flags&hasLat != 0 {
		out.Latency = &probe.Latency{Samples: int(c.samples), P50Ns: c.p50, P99Ns: c.p99}
	}
	if c.flags&hasBW != 0 {
		out.Bandwidth = &probe.Bandwidth{Gbps: c.gbps, MsgRate: c.rate}
	}
	return true
}

// each calls fn with every measured cell of every plane, rail by rail,
// each source's cells in dst order.
func (s *store) each(fn func(src, rail int, c *cell)) {
	for rail, p := range s.planes {
		if p == nil {
			continue
		}
		for src, row := range p.rows {
			for i := range row {
				fn(src, rail, &row[i])
			}
		}
	}
}
