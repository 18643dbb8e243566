package store

import (
	"slices"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// cellStore holds one sweep's cells compactly: at 1,024 nodes x 8 rails a
// map of whole cells took about 3 GB (string keys, a Cell and a Latency per
// cell); this takes about 17 bytes a cell.
//
// Same-rail cells between the sweep's own nodes, whose devices are the
// nodes' inventory devices (every cell a sweep produces), live in a grid
// (wire.GridSlot: one direction of a pair has its rails side by side), in
// blocks of 64 slots allocated on first use, so a sparse plan (one-to-all, k-batch) stays
// small. Figures are stored as quant codes: the grid is the snapshot's
// format (internal/wire) held in memory. Anything else (cross-rail cells, unknown nodes,
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
	// flows are the grid cells' flows, beside blocks (cellflow.go): nil
	// until a cell has one, so a sweep without flows pays nothing;
	// backFlows the same for their back flows.
	flows     []*wire.FlowBlock
	backFlows []*wire.FlowBlock

	count int // cells, dense and extra

	classes   []probe.Class // class code-1 → class; append-only
	classCode map[probe.Class]uint8
	errs      []*probe.Error // error code-1 → error; append-only
	errCode   map[probe.Error]uint16
	retests   map[int32][]wire.Attempt // by slot
	extra     map[cellKey]wire.Cell
}

// cellBlock is a grid block as the store keeps it: the snapshot format's
// block, with what copy-on-write and the sample counts need.
//
// The two fields fit in 8 bytes so a block is 240 bytes, a size class of
// its own, instead of 248 rounded up to 256: 0.25 bytes a cell, 34 MB at
// 4,096 x 8 (TestCellBlockSize). epoch is the store's epoch truncated: a
// block could only be mistaken for a current one by a view frozen 2^32
// freezes ago (a freeze is a snapshot or a matrix build) still alive.
type cellBlock struct {
	wire.GridBlock
	epoch  uint32
	hasLat uint8 // cells with latency (at most blockLen), to know Samples is set
}

const (
	blockBits = wire.BlockBits
	blockLen  = wire.BlockLen
	flagLat   = wire.FlagLat
	flagBW    = wire.FlagBW
	classMask = wire.ClassMask
)

func newCellStore(nodes []wire.Node) *cellStore {
	return &cellStore{NodeIndex: newNodeIndex(nodes), classCode: map[probe.Class]uint8{}, errCode: map[probe.Error]uint16{},
		retests: map[int32][]wire.Attempt{}, extra: map[cellKey]wire.Cell{}}
}

func (s *cellStore) len() int { return s.count }

func (s *cellStore) classOf(c probe.Class) (uint8, bool) {
	if code, ok := s.classCode[c]; ok {
		return code, true
	}
	if len(s.classes) >= wire.MaxClasses {
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
func (s *cellStore) put(c wire.Cell) {
	if slot, ok := s.slotOf(&c); ok {
		class, okC := s.classOf(c.Class)
		errc, okE := s.errOf(c.Error)
		if okC && okE {
			var lat *wire.LatQ
			var samples uint32
			if l := c.Latency; l != nil {
				lat, samples = new(wire.LatCodes(l)), uint32(l.Samples)
			}
			var bw *wire.BWQ
			if b := c.Bandwidth; b != nil {
				bw = new(wire.BWCodes(b))
			}
			s.putDense(slot, class, uint16(c.Round), lat, samples, bw, errc, c.Flow, c.BackFlow)
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
func quantized(c wire.Cell) wire.Cell {
	c.Latency, c.Bandwidth = quantLat(c.Latency), quantBW(c.Bandwidth)
	return c
}

func quantLat(l *probe.Latency) *probe.Latency {
	if l == nil {
		return nil
	}
	return new(wire.LatCodes(l).Latency(uint32(l.Samples)))
}

func quantBW(b *probe.Bandwidth) *probe.Bandwidth {
	if b == nil {
		return nil
	}
	return new(wire.BWCodes(b).Bandwidth())
}

// putDense writes one grid cell; the codes are already the store's.
func (s *cellStore) putDense(slot int32, class uint8, round uint16, lat *wire.LatQ, samples uint32, bw *wire.BWQ, errc, flow, back uint16) {
	if k, ok := s.extraAt(slot); ok {
		delete(s.extra, k)
		s.count--
	}
	b := s.writable(int(slot) >> blockBits)
	j := int(slot) & (blockLen - 1)
	old := b.Class[j]
	if old == 0 {
		s.count++
	}
	if old&flagLat != 0 {
		b.hasLat--
	}
	v := class
	if lat != nil {
		v |= flagLat
		if b.Lat == nil {
			b.Lat = new([blockLen]wire.LatQ)
		}
		b.Lat[j] = *lat
		b.SetSamples(j, samples, b.hasLat > 0)
		b.hasLat++
	} else if b.Lat != nil {
		b.Lat[j] = wire.LatQ{}
	}
	if bw != nil {
		v |= flagBW
		if b.BW == nil {
			b.BW = new([blockLen]wire.BWQ)
		}
		b.BW[j] = *bw
	} else if b.BW != nil {
		b.BW[j] = wire.BWQ{}
	}
	if errc != 0 && b.Err == nil {
		b.Err = new([blockLen]uint16)
	}
	if b.Err != nil {
		b.Err[j] = errc
	}
	b.Class[j], b.Round[j] = v, round
	s.setFlows(int(slot)>>blockBits, j, flow, back)
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

// clear empties a grid slot; it reports whether there was a cell.
func (s *cellStore) clear(slot int32) bool {
	bi, j := int(slot)>>blockBits, int(slot)&(blockLen-1)
	if s.blocks == nil || s.blocks[bi] == nil || s.blocks[bi].Class[j] == 0 {
		return false
	}
	b := s.writable(bi)
	if b.Class[j]&flagLat != 0 {
		b.hasLat--
	}
	b.Class[j] = 0
	delete(s.retests, slot)
	return true
}

// writable returns block bi for writing, cloning what a snapshot shares.
func (s *cellStore) writable(bi int) *cellBlock {
	if s.blocks == nil {
		s.blocks = make([]*cellBlock, wire.GridBlocks(s.n, s.rails))
		s.blocksEpoch = s.epoch
	}
	if s.blocksEpoch != s.epoch {
		s.blocks = slices.Clone(s.blocks)
		s.flows = slices.Clone(s.flows)
		s.backFlows = slices.Clone(s.backFlows)
		s.blocksEpoch = s.epoch
	}
	b := s.blocks[bi]
	switch {
	case b == nil:
		b = &cellBlock{epoch: uint32(s.epoch)}
		s.blocks[bi] = b
	case b.epoch != uint32(s.epoch):
		b = b.clone(s.epoch)
		s.blocks[bi] = b
		s.cloneFlows(bi)
	}
	return b
}

func (b *cellBlock) clone(epoch uint64) *cellBlock {
	c := *b
	c.epoch = uint32(epoch)
	if b.SamplesX != nil {
		x := *b.SamplesX
		c.SamplesX = &x
	}
	if b.Lat != nil {
		x := *b.Lat
		c.Lat = &x
	}
	if b.BW != nil {
		x := *b.BW
		c.BW = &x
	}
	if b.Err != nil {
		x := *b.Err
		c.Err = &x
	}
	return &c
}

func (s *cellStore) setRetests(slot int32, r []wire.Attempt) {
	if len(r) == 0 {
		delete(s.retests, slot)
		return
	}
	s.retests[slot] = r
}

// addAttempt adds a confirmation attempt to the cell with key k; false
// when there is no such cell.
func (s *cellStore) addAttempt(k cellKey, a wire.Attempt) bool {
	if c, ok := s.extra[k]; ok {
		c.Retests = append(slices.Clip(c.Retests), a)
		s.extra[k] = c
		return true
	}
	slot, ok := s.slotOfKey(k)
	if !ok || s.blocks == nil {
		return false
	}
	if b := s.blocks[int(slot)>>blockBits]; b == nil || b.Class[int(slot)&(blockLen-1)] == 0 {
		return false
	}
	s.retests[slot] = append(slices.Clip(s.retests[slot]), a)
	return true
}
