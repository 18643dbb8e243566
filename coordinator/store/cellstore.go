package store

import (
	"maps"
	"slices"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// cellStore holds one sweep's cells compactly: at 1,024 nodes x 8 rails a
// map of matrix.Cell took about 3 GB (string keys, a Cell and a Latency per
// cell); this takes about 17 bytes a cell.
//
// Same-rail cells between the sweep's own nodes, whose devices are the
// nodes' inventory devices (every cell a sweep produces), live in a grid:
// slot (rail*n + src)*n + dst, in blocks of 64 slots allocated on first
// use, so a sparse plan (one-to-all, k-batch) stays small. Figures are
// stored as quant codes. Anything else (cross-rail cells, unknown nodes,
// hand-made test cells) is kept whole in extra.
//
// Snapshots share blocks copy-on-write: freeze bumps the epoch, and a write
// to a block from an older epoch clones it first, so a snapshot can stream
// the frozen blocks while Apply goes on.
type cellStore struct {
	NodeIndex

	epoch       uint64
	blocksEpoch uint64
	blocks      []*cellBlock // nil until the first dense cell

	count int // cells, dense and extra

	classes   []probe.Class // class code-1 → class; append-only
	classCode map[probe.Class]uint8
	errs      []*probe.Error // error code-1 → error; append-only
	errCode   map[probe.Error]uint16
	retests   map[int32][]matrix.Attempt // by slot
	extra     map[cellKey]matrix.Cell
}

const (
	blockBits = 6
	blockLen  = 1 << blockBits

	// A block's class byte: the class code (1..maxClasses; 0 = no cell)
	// and whether latency and bandwidth figures are present.
	flagLat    = 1 << 6
	flagBW     = 1 << 7
	classMask  = flagLat - 1
	maxClasses = classMask
)

// latQ holds min, p50, p90, p99, p999, max and stdev as quant codes.
type latQ [7]uint16

// bwQ holds Gb/s, messages/s and seconds as quant codes, and the bytes.
type bwQ struct {
	bytes int64
	q     [3]uint16
}

type cellBlock struct {
	epoch    uint64
	class    [blockLen]uint8
	round    [blockLen]uint16
	samples  uint32            // Latency.Samples shared by the block...
	samplesX *[blockLen]uint32 // ...or per slot once they differ
	lat      *[blockLen]latQ   // nil until a cell has latency
	bw       *[blockLen]bwQ    // nil until a cell has bandwidth
	err      *[blockLen]uint16 // error codes; nil until a cell has one
	hasLat   int               // cells with latency, to know samples is set
}

// NodeIndex places a sweep's cells in its grid; the leader's round encoder
// and the FSM's store share it, so both agree on which cells fit.
type NodeIndex struct {
	nodes []matrix.Node
	idx   map[string]int32
	n     int
	rails int
}

func NewNodeIndex(nodes []matrix.Node) NodeIndex {
	x := NodeIndex{nodes: nodes, idx: make(map[string]int32, len(nodes)), n: len(nodes)}
	for i, nd := range nodes {
		x.idx[nd.Name] = int32(i)
		x.rails = max(x.rails, len(nd.Ports))
	}
	return x
}

func newCellStore(nodes []matrix.Node) *cellStore {
	return &cellStore{NodeIndex: NewNodeIndex(nodes), classCode: map[probe.Class]uint8{}, errCode: map[probe.Error]uint16{},
		retests: map[int32][]matrix.Attempt{}, extra: map[cellKey]matrix.Cell{}}
}

func (s *cellStore) len() int { return s.count }

func portDevice(n matrix.Node, rail int) string {
	if rail >= 0 && rail < len(n.Ports) {
		return n.Ports[rail].Device
	}
	return ""
}

// slotOf says where c lives in the grid, or false when it must be kept whole.
func (s *NodeIndex) slotOf(c *matrix.Cell) (int32, bool) {
	si, di, ok := s.indices(c, nil)
	if !ok {
		return 0, false
	}
	return s.slot(int(si), int(di), c.Rail), true
}

// indices gives c's source and destination node indices, or false when c
// does not fit the grid. A memo (may be nil) remembers the last names
// looked up: a round's cells come a direction's rails at a time.
func (s *NodeIndex) indices(c *matrix.Cell, m *idxMemo) (int32, int32, bool) {
	if c.DstRail != nil && *c.DstRail != c.Rail || c.Rail < 0 || c.Rail >= s.rails || c.Round < 0 || c.Round > 0xffff {
		return 0, 0, false
	}
	if m == nil {
		m = &idxMemo{}
	}
	si, ok1 := m.lookup(s.idx, &m.src, c.Src)
	di, ok2 := m.lookup(s.idx, &m.dst, c.Dst)
	if !ok1 || !ok2 || si == di || c.SrcDevice != portDevice(s.nodes[si], c.Rail) || c.DstDevice != portDevice(s.nodes[di], c.Rail) {
		return 0, 0, false
	}
	if c.Latency != nil && (c.Latency.Samples < 0 || c.Latency.Samples > 1<<32-1) {
		return 0, 0, false
	}
	return si, di, true
}

type idxMemo struct{ src, dst memoEntry }

type memoEntry struct {
	name string
	i    int32
	ok   bool
}

func (*idxMemo) lookup(idx map[string]int32, e *memoEntry, name string) (int32, bool) {
	if e.name != name || name == "" {
		e.i, e.ok = idx[name]
		e.name = name
	}
	return e.i, e.ok
}

func (s *NodeIndex) slot(src, dst, rail int) int32 { return gridSlot(s.n, src, dst, rail) }

// gridSlot and gridCoords are the grid's layout, for n nodes: rail-major,
// then source, then destination.
func gridSlot(n, src, dst, rail int) int32 { return int32((rail*n+src)*n + dst) }

func gridCoords(n int, slot int32) (src, dst, rail int) {
	sl := int(slot)
	dst, sl = sl%n, sl/n
	return sl % n, dst, sl / n
}

// key is the cellKey of a grid slot.
func (s *NodeIndex) key(slot int32) cellKey {
	src, d, rail := gridCoords(s.n, slot)
	return cellKey{Src: s.nodes[src].Name, Dst: s.nodes[d].Name, Rail: rail, DstRail: rail}
}

func (s *cellStore) classOf(c probe.Class) (uint8, bool) {
	if code, ok := s.classCode[c]; ok {
		return code, true
	}
	if len(s.classes) >= maxClasses {
		return 0, false
	}
	s.classes = append(s.classes, c)
	code := uint8(len(s.classes))
	s.classCode[c] = code
	return code, true
}

func (s *cellStore) errOf(e *probe.Error) (uint16, bool) {
	if e == nil {
		return 0, true
	}
	if code, ok := s.errCode[*e]; ok {
		return code, true
	}
	if len(s.errs) >= 0xffff {
		return 0, false
	}
	cp := *e
	s.errs = append(s.errs, &cp)
	code := uint16(len(s.errs))
	s.errCode[cp] = code
	return code, true
}

// put stores c, replacing any cell with its key.
func (s *cellStore) put(c matrix.Cell) {
	if slot, ok := s.slotOf(&c); ok {
		class, okC := s.classOf(c.Class)
		errc, okE := s.errOf(c.Error)
		if okC && okE {
			var lat *latQ
			var samples uint32
			if l := c.Latency; l != nil {
				lat = &latQ{quant(l.MinNs), quant(l.P50Ns), quant(l.P90Ns), quant(l.P99Ns), quant(l.P999Ns), quant(l.MaxNs), quant(l.StdevNs)}
				samples = uint32(l.Samples)
			}
			var bw *bwQ
			if b := c.Bandwidth; b != nil {
				bw = &bwQ{bytes: b.Bytes, q: [3]uint16{quant(b.Gbps), quant(b.MsgRate), quant(b.Duration)}}
			}
			s.putDense(slot, class, uint16(c.Round), lat, samples, bw, errc)
			s.setRetests(slot, c.Retests)
			return
		}
	}
	k := keyOf(&c)
	if slot, ok := s.slotOfKey(k); ok && s.clear(slot) {
		s.count--
	}
	if _, had := s.extra[k]; !had {
		s.count++
	}
	s.extra[k] = quantized(c)
}

// quantized rounds a kept-whole cell's figures like the grid's, so every
// stored figure reads back the same whichever way it was kept.
func quantized(c matrix.Cell) matrix.Cell {
	if l := c.Latency; l != nil {
		c.Latency = &probe.Latency{Samples: l.Samples, MinNs: quantize(l.MinNs), P50Ns: quantize(l.P50Ns), P90Ns: quantize(l.P90Ns),
			P99Ns: quantize(l.P99Ns), P999Ns: quantize(l.P999Ns), MaxNs: quantize(l.MaxNs), StdevNs: quantize(l.StdevNs)}
	}
	if b := c.Bandwidth; b != nil {
		c.Bandwidth = &probe.Bandwidth{Gbps: quantize(b.Gbps), MsgRate: quantize(b.MsgRate), Bytes: b.Bytes, Duration: quantize(b.Duration)}
	}
	return c
}

func (s *NodeIndex) slotOfKey(k cellKey) (int32, bool) {
	si, ok1 := s.idx[k.Src]
	di, ok2 := s.idx[k.Dst]
	if !ok1 || !ok2 || si == di || k.Rail != k.DstRail || k.Rail < 0 || k.Rail >= s.rails {
		return 0, false
	}
	return s.slot(int(si), int(di), k.Rail), true
}

// putDense writes one grid cell; the codes are already the store's.
func (s *cellStore) putDense(slot int32, class uint8, round uint16, lat *latQ, samples uint32, bw *bwQ, errc uint16) {
	if k, ok := s.extraAt(slot); ok {
		delete(s.extra, k)
		s.count--
	}
	b := s.writable(int(slot) >> blockBits)
	j := int(slot) & (blockLen - 1)
	old := b.class[j]
	if old == 0 {
		s.count++
	}
	if old&flagLat != 0 {
		b.hasLat--
	}
	v := class
	if lat != nil {
		v |= flagLat
		if b.lat == nil {
			b.lat = new([blockLen]latQ)
		}
		b.lat[j] = *lat
		b.setSamples(j, samples)
		b.hasLat++
	} else if b.lat != nil {
		b.lat[j] = latQ{}
	}
	if bw != nil {
		v |= flagBW
		if b.bw == nil {
			b.bw = new([blockLen]bwQ)
		}
		b.bw[j] = *bw
	} else if b.bw != nil {
		b.bw[j] = bwQ{}
	}
	if errc != 0 && b.err == nil {
		b.err = new([blockLen]uint16)
	}
	if b.err != nil {
		b.err[j] = errc
	}
	b.class[j], b.round[j] = v, round
}

// extraAt finds a kept-whole cell with a grid slot's key; only hand-made
// cells ever get there, so the common case is one map length check.
func (s *cellStore) extraAt(slot int32) (cellKey, bool) {
	if len(s.extra) == 0 {
		return cellKey{}, false
	}
	k := s.key(slot)
	_, ok := s.extra[k]
	return k, ok
}

func (b *cellBlock) setSamples(j int, v uint32) {
	switch {
	case b.samplesX != nil:
		b.samplesX[j] = v
	case b.hasLat == 0 || b.samples == v:
		b.samples = v
	default:
		b.samplesX = new([blockLen]uint32)
		for i := range b.samplesX {
			b.samplesX[i] = b.samples
		}
		b.samplesX[j] = v
	}
}

func (b *cellBlock) samplesAt(j int) uint32 {
	if b.samplesX != nil {
		return b.samplesX[j]
	}
	return b.samples
}

// clear empties a grid slot; it reports whether there was a cell.
func (s *cellStore) clear(slot int32) bool {
	bi, j := int(slot)>>blockBits, int(slot)&(blockLen-1)
	if s.blocks == nil || s.blocks[bi] == nil || s.blocks[bi].class[j] == 0 {
		return false
	}
	b := s.writable(bi)
	if b.class[j]&flagLat != 0 {
		b.hasLat--
	}
	b.class[j] = 0
	delete(s.retests, slot)
	return true
}

// writable returns block bi for writing, cloning what a snapshot shares.
func (s *cellStore) writable(bi int) *cellBlock {
	if s.blocks == nil {
		s.blocks = make([]*cellBlock, (s.rails*s.n*s.n+blockLen-1)/blockLen)
		s.blocksEpoch = s.epoch
	}
	if s.blocksEpoch != s.epoch {
		s.blocks = slices.Clone(s.blocks)
		s.blocksEpoch = s.epoch
	}
	b := s.blocks[bi]
	switch {
	case b == nil:
		b = &cellBlock{epoch: s.epoch}
		s.blocks[bi] = b
	case b.epoch != s.epoch:
		b = b.clone(s.epoch)
		s.blocks[bi] = b
	}
	return b
}

func (b *cellBlock) clone(epoch uint64) *cellBlock {
	c := *b
	c.epoch = epoch
	if b.samplesX != nil {
		x := *b.samplesX
		c.samplesX = &x
	}
	if b.lat != nil {
		x := *b.lat
		c.lat = &x
	}
	if b.bw != nil {
		x := *b.bw
		c.bw = &x
	}
	if b.err != nil {
		x := *b.err
		c.err = &x
	}
	return &c
}

func (s *cellStore) setRetests(slot int32, r []matrix.Attempt) {
	if len(r) == 0 {
		delete(s.retests, slot)
		return
	}
	s.retests[slot] = r
}

// get returns the cell with key k.
func (s *cellStore) get(k cellKey) (matrix.Cell, bool) {
	if c, ok := s.extra[k]; ok {
		return c, true
	}
	slot, ok := s.slotOfKey(k)
	if !ok || s.blocks == nil {
		return matrix.Cell{}, false
	}
	b := s.blocks[int(slot)>>blockBits]
	j := int(slot) & (blockLen - 1)
	if b == nil || b.class[j] == 0 {
		return matrix.Cell{}, false
	}
	v := s.view()
	return v.cell(slot, b, j, nil, nil), true
}

// storeView is a read-only copy of a store's state: the live store's for a
// read under the FSM lock, or a frozen one for a snapshot.
type storeView struct {
	nodes   []matrix.Node
	n       int
	rails   int
	blocks  []*cellBlock
	count   int
	classes []probe.Class
	errs    []*probe.Error
	retests map[int32][]matrix.Attempt
	extra   map[cellKey]matrix.Cell
}

// view reads the live store; valid only while the caller holds the lock.
func (s *cellStore) view() storeView {
	return storeView{nodes: s.nodes, n: s.n, rails: s.rails, blocks: s.blocks, count: s.count, classes: s.classes, errs: s.errs,
		retests: s.retests, extra: s.extra}
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

// cell decodes grid slot (block b, index j). lat and bw, when given, are
// where the figures go, so a caller decoding millions of cells can hand out
// slices of one allocation.
func (v *storeView) cell(slot int32, b *cellBlock, j int, lat *probe.Latency, bw *probe.Bandwidth) matrix.Cell {
	src, d, rail := gridCoords(v.n, slot)
	cls := b.class[j]
	c := matrix.Cell{Src: v.nodes[src].Name, Dst: v.nodes[d].Name, Rail: rail,
		SrcDevice: portDevice(v.nodes[src], rail), DstDevice: portDevice(v.nodes[d], rail),
		Round: int(b.round[j]), Class: v.classes[cls&classMask-1], Retests: v.retests[slot]}
	if b.err != nil && b.err[j] != 0 {
		c.Error = v.errs[b.err[j]-1]
	}
	if cls&flagLat != 0 {
		if lat == nil {
			lat = new(probe.Latency)
		}
		q := &b.lat[j]
		*lat = probe.Latency{Samples: int(b.samplesAt(j)), MinNs: unquant(q[0]), P50Ns: unquant(q[1]), P90Ns: unquant(q[2]),
			P99Ns: unquant(q[3]), P999Ns: unquant(q[4]), MaxNs: unquant(q[5]), StdevNs: unquant(q[6])}
		c.Latency = lat
	}
	if cls&flagBW != 0 {
		if bw == nil {
			bw = new(probe.Bandwidth)
		}
		q := &b.bw[j]
		*bw = probe.Bandwidth{Gbps: unquant(q.q[0]), MsgRate: unquant(q.q[1]), Bytes: q.bytes, Duration: unquant(q.q[2])}
		c.Bandwidth = bw
	}
	return c
}
