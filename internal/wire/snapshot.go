package wire

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/klauspost/compress/flate"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// A snapshot is the coordinator's whole state. Layout: the version byte,
// then a flate stream of: the sweep count, and per sweep its head (a
// length-prefixed message: header, spec, nodes, committed rounds, retest
// plans, cells kept whole, the grid cells' retest attempts, the grid's
// class and error tables, its block count) and its grid blocks, each
// behind its index+1, ended by 0. It is written and read as a stream, so
// memory stays flat however big the sweeps are.
//
// After the sweeps comes the trailer. Version 1 had only an optional live
// plan there (length-prefixed, absent at the stream's end). Version 2
// always writes the plan's length (0: none) and then the sweeps' counter
// sums (a count, then each length-prefixed). Version 3 is version 2 with
// today's grid slots (GridSlot); versions 1 and 2 laid the grid out rail
// by rail. Version 4 added flows: a block's cells' flows and back flows
// after its figures (blkFlow, blkBackFlow), and each whole cell's in the
// sweep's head (head version 2). Version 5 ends the trailer with the
// topologies (topologyStateMsg, length-prefixed, 0: none), version 6
// with the sweeps' traced paths (pathsStateMsg, the same way). A reader
// reads every older version too,
// moving an old grid's cells to today's slots (snapshot_v2.go): a
// coordinator upgraded in place restores from the snapshot its older self
// wrote.
const SnapshotVersion = 6

// snapshotV1 is the layout before the counters trailer; snapshotV2 the
// last with the rail-major grid; snapshotV3 the last without flows;
// snapshotV4 the last without topologies; snapshotV5 the last without
// traced paths.
const (
	snapshotV1 = 1
	snapshotV2 = 2
	snapshotV3 = 3
	snapshotV4 = 4
	snapshotV5 = 5
)

// SnapshotTrailer is what a snapshot keeps after its sweeps.
type SnapshotTrailer struct {
	// Live is the always-on mesh's plan, so that a replica restored from
	// the snapshot continues its numbering and windows; nil: none.
	Live *LivePlan
	// Counters are the sweeps' counter sums, for the sweeps whose ports'
	// counters moved.
	Counters []SweepCounters
	// Topologies are the fabric topologies committed and the sweeps that
	// ran on them; nil: none was ever committed.
	Topologies *TopologyState
	// Paths are the kept sweeps' traced paths.
	Paths []SweepPaths
}

// SnapshotSweep is one sweep in a snapshot.
type SnapshotSweep struct {
	Info     api.SweepInfo
	Spec     Spec
	Nodes    []Node
	Rounds   []int // committed, ascending
	Retests  []RetestPlan
	Whole    []Cell
	Attempts []SlotAttempts
	Classes  []probe.Class // grid class code-1 → class
	Errors   []probe.Error // grid error code-1 → error
	// Blocks is the grid: nil before its first cell, else GridBlocks of
	// the nodes long, a nil block holding no cell.
	Blocks []*GridBlock
	// Flows are the grid cells' flows: nil while no cell has one, else as
	// long as Blocks, a nil entry for a block whose cells have none.
	Flows []*FlowBlock
	// BackFlows are their back flows, as Flows: each is allocated on its
	// own, so flows known in one direction only cost nothing in the other.
	BackFlows []*FlowBlock

	nBlocks uint64 // as read, before it is checked against the nodes
}

// SlotAttempts is a grid cell's retest attempts.
type SlotAttempts struct {
	Slot     int32
	Attempts []Attempt
}

// snapshotHead is a sweep's head; version 2 added the whole cells' flows.
var snapshotHead = headCodec(2, true)

// snapshotHeadV1 is the head of snapshots before version 4.
var snapshotHeadV1 = headCodec(1, false)

// headFor is the head codec of a snapshot of the given version.
func headFor(version byte) *Codec[SnapshotSweep] {
	if version <= snapshotV3 {
		return snapshotHeadV1
	}
	return snapshotHead
}

func headCodec(version byte, flow bool) *Codec[SnapshotSweep] {
	putCell := func(w *writer, c *Cell) { w.cellOf(c, flow) }
	getCell := func(r *reader, c *Cell) { r.cellOf(c, flow) }
	return &Codec[SnapshotSweep]{name: "snapshot sweep", version: version,
		put: func(w *writer, s *SnapshotSweep) { putHead(w, s, putCell) },
		get: func(r *reader, s *SnapshotSweep) { getHead(r, s, getCell) }}
}

func putHead(w *writer, s *SnapshotSweep, putCell func(*writer, *Cell)) {
	w.sweepInfo(&s.Info)
	w.spec(&s.Spec)
	putList(w, s.Nodes, (*writer).node)
	w.ints(s.Rounds)
	putList(w, s.Retests, (*writer).retestPlan)
	putList(w, s.Whole, putCell)
	putList(w, s.Attempts, func(w *writer, a *SlotAttempts) {
		w.u64(uint64(a.Slot))
		putList(w, a.Attempts, (*writer).attempt)
	})
	putList(w, s.Classes, func(w *writer, c *probe.Class) { w.str(string(*c)) })
	putList(w, s.Errors, (*writer).errorFields)
	w.u64(uint64(len(s.Blocks)))
}

func getHead(r *reader, s *SnapshotSweep, getCell func(*reader, *Cell)) {
	r.sweepInfo(&s.Info)
	r.spec(&s.Spec)
	s.Nodes = getList(r, (*reader).node)
	s.Rounds = r.ints()
	s.Retests = getList(r, (*reader).retestPlan)
	s.Whole = getList(r, getCell)
	s.Attempts = getList(r, func(r *reader, a *SlotAttempts) {
		a.Slot = int32(r.u32())
		a.Attempts = getList(r, (*reader).attempt)
	})
	s.Classes = getList(r, func(r *reader, c *probe.Class) { *c = probe.Class(r.str()) })
	s.Errors = getList(r, (*reader).errorFields)
	s.nBlocks = r.u64()
}

// WriteSnapshot writes sweeps to w.
func WriteSnapshot(w io.Writer, sweeps []SnapshotSweep) error {
	return WriteSnapshotWith(w, sweeps, SnapshotTrailer{})
}

// WriteSnapshotWith writes sweeps and, after them, the trailer.
func WriteSnapshotWith(w io.Writer, sweeps []SnapshotSweep, t SnapshotTrailer) error {
	return writeSnapshot(w, sweeps, t, SnapshotVersion)
}

// writeSnapshot writes in the layout of version, 2 or later (the tests'
// older snapshots); before version 4 the flows are left out. The grid
// must already be in that version's slots.
func writeSnapshot(w io.Writer, sweeps []SnapshotSweep, t SnapshotTrailer, version byte) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := bw.WriteByte(version); err != nil {
		return err
	}
	zw, _ := flate.NewWriter(bw, flate.BestSpeed) // the level is valid
	out := &streamWriter{w: zw}
	out.uv(uint64(len(sweeps)))
	for i := range sweeps {
		s := &sweeps[i]
		head := headFor(version).Append(nil, s)
		out.uv(uint64(len(head)))
		out.write(head)
		for bi, b := range s.Blocks {
			if b != nil {
				out.uv(uint64(bi) + 1)
				var f, back *FlowBlock
				if version > snapshotV3 {
					f, back = flowAt(s.Flows, bi), flowAt(s.BackFlows, bi)
				}
				out.block(b, f, back)
			}
		}
		out.uv(0)
	}
	var live []byte
	if t.Live != nil {
		live = LivePlanMsg.Append(nil, t.Live)
	}
	out.uv(uint64(len(live)))
	out.write(live)
	out.uv(uint64(len(t.Counters)))
	for i := range t.Counters {
		body := sweepCountersMsg.Append(nil, &t.Counters[i])
		out.uv(uint64(len(body)))
		out.write(body)
	}
	if version > snapshotV4 {
		var topo []byte
		if t.Topologies != nil {
			topo = topologyStateMsg.Append(nil, t.Topologies)
		}
		out.uv(uint64(len(topo)))
		out.write(topo)
	}
	if version > snapshotV5 {
		var paths []byte
		if len(t.Paths) > 0 {
			paths = pathsStateMsg.Append(nil, &t.Paths)
		}
		out.uv(uint64(len(paths)))
		out.write(paths)
	}
	if out.err != nil {
		return out.err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return bw.Flush()
}

const (
	blkSamplesX = 1 << iota
	blkLat
	blkBW
	blkErr
	blkFlow     // version 4
	blkBackFlow // version 4
)

// flowAt is block bi's flows in fs, nil when it has none.
func flowAt(fs []*FlowBlock, bi int) *FlowBlock {
	if fs == nil {
		return nil
	}
	return fs[bi]
}

// streamWriter writes to a stream, keeping the first error.
type streamWriter struct {
	w   io.Writer
	buf []byte
	err error
}

func (w *streamWriter) write(b []byte) {
	if w.err == nil && len(b) > 0 {
		_, w.err = w.w.Write(b)
	}
}

func (w *streamWriter) uv(v uint64) {
	w.buf = binary.AppendUvarint(w.buf[:0], v)
	w.write(w.buf)
	w.buf = w.buf[:0]
}

// block writes b and, when not nil, its cells' flows f and back flows
// back.
func (w *streamWriter) block(b *GridBlock, f, back *FlowBlock) {
	var flags byte
	if b.SamplesX != nil {
		flags |= blkSamplesX
	}
	if b.Lat != nil {
		flags |= blkLat
	}
	if b.BW != nil {
		flags |= blkBW
	}
	if b.Err != nil {
		flags |= blkErr
	}
	if f != nil {
		flags |= blkFlow
	}
	if back != nil {
		flags |= blkBackFlow
	}
	buf := append(w.buf[:0], flags)
	buf = append(buf, b.Class[:]...)
	for _, r := range b.Round {
		buf = binary.LittleEndian.AppendUint16(buf, r)
	}
	buf = binary.AppendUvarint(buf, uint64(b.Samples))
	if b.SamplesX != nil {
		for _, s := range b.SamplesX {
			buf = binary.LittleEndian.AppendUint32(buf, s)
		}
	}
	if b.Lat != nil {
		// Field by field, so that flate sees runs of similar codes.
		for k := range len(LatQ{}) {
			for j := range b.Lat {
				buf = binary.LittleEndian.AppendUint16(buf, b.Lat[j][k])
			}
		}
	}
	if b.BW != nil {
		for j := range b.BW {
			buf = binary.LittleEndian.AppendUint64(buf, uint64(b.BW[j].Bytes))
			for _, q := range b.BW[j].Q {
				buf = binary.LittleEndian.AppendUint16(buf, q)
			}
		}
	}
	if b.Err != nil {
		for _, e := range b.Err {
			buf = binary.LittleEndian.AppendUint16(buf, e)
		}
	}
	for _, fb := range [...]*FlowBlock{f, back} {
		if fb != nil {
			for _, v := range fb {
				buf = binary.LittleEndian.AppendUint16(buf, v)
			}
		}
	}
	w.write(buf)
	w.buf = buf[:0]
}

// ReadSnapshot reads a snapshot, handing each sweep to each once its grid
// is read and checked: every cell in the grid, every class and error code
// in its table, every figure flag with its figures.
func ReadSnapshot(r io.Reader, each func(*SnapshotSweep) error) error {
	_, err := ReadSnapshotWith(r, each)
	return err
}

// ReadSnapshotWith is ReadSnapshot that also returns the trailer.
func ReadSnapshotWith(r io.Reader, each func(*SnapshotSweep) error) (SnapshotTrailer, error) {
	var t SnapshotTrailer
	br := bufio.NewReaderSize(r, 1<<20)
	head, err := br.Peek(1)
	if err != nil {
		return t, fmt.Errorf("snapshot: %w", err)
	}
	version := head[0]
	if version < snapshotV1 || version > snapshotV5 {
		if err := checkVersion("snapshot", SnapshotVersion, head); err != nil {
			return t, err
		}
	}
	if _, err := br.Discard(1); err != nil {
		return t, fmt.Errorf("snapshot: %w", err)
	}
	zr := flate.NewReader(br)
	defer zr.Close()
	in := &streamReader{r: bufio.NewReaderSize(zr, 1<<16), railMajor: version <= snapshotV2, version: version}
	for n := in.uv(); n > 0 && in.err == nil; n-- {
		s := in.sweep()
		if in.err != nil {
			break
		}
		if err := each(s); err != nil {
			return t, err
		}
	}
	if in.err != nil {
		return t, in.err
	}
	if version == snapshotV1 {
		t.Live, err = in.livePlanV1()
		return t, err
	}
	return in.trailer()
}

// livePlanV1 reads version 1's optional plan after the sweeps: the
// stream's end means there is none.
func (in *streamReader) livePlanV1() (*LivePlan, error) {
	if _, err := in.r.Peek(1); err == io.EOF {
		return nil, nil
	}
	return in.livePlan(in.uv())
}

func (in *streamReader) livePlan(n uint64) (*LivePlan, error) {
	body := in.read(int(min(n, 1<<30)))
	if in.err != nil {
		return nil, fmt.Errorf("snapshot: live plan: %w", in.err)
	}
	p, err := LivePlanMsg.Decode(body)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return &p, nil
}

// section reads one length-prefixed trailer section (0: absent, ok
// false); a short stream is left in in.err.
func section[T any](in *streamReader, c *Codec[T]) (v T, ok bool, err error) {
	n := in.uv()
	if in.err != nil || n == 0 {
		return v, false, nil
	}
	body := in.read(int(min(n, 1<<30)))
	if in.err != nil {
		return v, false, nil
	}
	if v, err = c.Decode(body); err != nil {
		return v, false, fmt.Errorf("snapshot: %w", err)
	}
	return v, true, nil
}

// trailer reads version 2's trailer.
func (in *streamReader) trailer() (SnapshotTrailer, error) {
	var t SnapshotTrailer
	var err error
	if n := in.uv(); in.err == nil && n > 0 {
		if t.Live, err = in.livePlan(n); err != nil {
			return t, err
		}
	}
	for n := in.uv(); n > 0 && in.err == nil; n-- {
		body := in.read(int(min(in.uv(), 1<<30)))
		if in.err != nil {
			break
		}
		sc, err := sweepCountersMsg.Decode(body)
		if err != nil {
			return t, fmt.Errorf("snapshot: %w", err)
		}
		t.Counters = append(t.Counters, sc)
	}
	if in.version > snapshotV4 {
		ts, ok, err := section(in, topologyStateMsg)
		if err != nil {
			return t, err
		}
		if ok {
			t.Topologies = &ts
		}
	}
	if in.version > snapshotV5 {
		ps, _, err := section(in, pathsStateMsg)
		if err != nil {
			return t, err
		}
		t.Paths = ps
	}
	if in.err != nil {
		return t, fmt.Errorf("snapshot: trailer: %w", in.err)
	}
	return t, nil
}

func (in *streamReader) sweep() *SnapshotSweep {
	raw := in.read(int(min(in.uv(), 1<<31)))
	if in.err != nil {
		return nil
	}
	s, err := headFor(in.version).Decode(raw)
	if err != nil {
		in.err = err
		return nil
	}
	if err := CheckGrid(s.Nodes); err != nil {
		in.fail(fmt.Sprintf("sweep %s: %v", s.Info.ID, err))
		return nil
	}
	n, rails := len(s.Nodes), GridRails(s.Nodes)
	g := gridLayout{n, rails, in.railMajor}
	if nb := s.nBlocks; nb > 0 {
		if nb != uint64(g.blocks()) {
			in.fail(fmt.Sprintf("sweep %s: %d grid blocks, its nodes make %d", s.Info.ID, nb, g.blocks()))
			return nil
		}
		s.Blocks = make([]*GridBlock, nb)
	}
	if len(s.Classes) > MaxClasses || len(s.Errors) > 0xffff {
		in.fail("grid tables too long")
	}
	for _, a := range s.Attempts {
		if !g.valid(a.Slot) {
			in.fail("retest attempts for a slot past the sweep's grid")
		}
	}
	for in.err == nil {
		bi := in.uv()
		if bi == 0 {
			break
		}
		if bi > uint64(len(s.Blocks)) {
			in.fail("grid block out of range")
			break
		}
		b, f, back := in.block(len(s.Classes), len(s.Errors))
		if b != nil && !g.holds(b, int(bi-1)) {
			// Such a cell has no (src, dst, rail): reading it panicked.
			in.fail("grid block holds a cell past the sweep's grid")
		}
		s.Blocks[bi-1] = b
		putFlow(&s.Flows, len(s.Blocks), int(bi-1), f)
		putFlow(&s.BackFlows, len(s.Blocks), int(bi-1), back)
	}
	if in.railMajor && in.err == nil {
		relayout(&s, n, rails)
	}
	return &s
}

// putFlow sets entry i of *fs, n long once allocated, to f; it allocates
// nothing for a nil f, so a sweep without flows reads back without.
func putFlow(fs *[]*FlowBlock, n, i int, f *FlowBlock) {
	if *fs == nil {
		if f == nil {
			return
		}
		*fs = make([]*FlowBlock, n)
	}
	(*fs)[i] = f
}
