package links

import (
	"sort"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// store holds a run's measured planes in compact form and hands them to
// the matrix as a matrix.FigureSource. A plane at 4,096 nodes is 16.8 M
// cells: as matrix.Cell values with their figures (264 bytes a cell on
// the heap, full of pointers) a process measuring one passes 11 GB
// before the matrix indexes them; here they are 48 bytes a cell without
// pointers, so the collector never scans them. A cell keeps what
// the analysis reads (matrix.Figures, the flows, the error of a failed
// test); Fill rebuilds the rest of the Cell from the names.
type store struct {
	names  []string
	device func(rail int) string
	planes []*plane // by rail; nil: not measured
}

// plane is one rail's ordered pairs, src*n+dst (the diagonal unused).
type plane struct {
	n     int
	cells []figs
	errs  [][]cellErr // by source: its failed cells, in dst order
}

type figs struct {
	p50, p99, gbps, rate float64
	samples              int32
	flow, backFlow       uint16
	flags                uint8
}

const (
	hasLat uint8 = 1 << iota
	hasBW
	failed
	measured // a plane of a fabric sweep leaves most cells unmeasured
)

type cellErr struct {
	dst int32
	err *probe.Error
}

func newStore(names []string, rails int, device func(int) string) *store {
	return &store{names: names, device: device, planes: make([]*plane, rails)}
}

// planeBytes is what a plane of n nodes holds before any test failed.
func planeBytes(n int) uint64 { return uint64(n) * uint64(n) * 48 }

func (s *store) addPlane(rail int) *plane {
	n := len(s.names)
	p := &plane{n: n, cells: make([]figs, n*n), errs: make([][]cellErr, n)}
	s.planes[rail] = p
	return p
}

// put records cell src → dst. Each source's row has one writer, and its
// cells come in dst order.
func (p *plane) put(src, dst int, c *matrix.Cell) {
	f := &p.cells[src*p.n+dst]
	f.flow, f.backFlow = c.Flow, c.BackFlow
	f.flags |= measured
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
}

func (p *plane) errAt(src, dst int) *probe.Error {
	row := p.errs[src]
	i := sort.Search(len(row), func(i int) bool { return int(row[i].dst) >= dst })
	if i < len(row) && int(row[i].dst) == dst {
		return row[i].err
	}
	return nil
}

func (s *store) at(src, dst, rail int) (*plane, *figs) {
	if rail < 0 || rail >= len(s.planes) || s.planes[rail] == nil || src == dst {
		return nil, nil
	}
	p := s.planes[rail]
	if c := &p.cells[src*p.n+dst]; c.flags&measured != 0 {
		return p, c
	}
	return nil, nil
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

// Has: a measured plane has every node, as every pair of it was tested.
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
		Bandwidth: c.flags&hasBW != 0, Gbps: c.gbps, MsgRate: c.rate}
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
