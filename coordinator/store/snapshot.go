package store

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/flate"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// Snapshot format: a magic byte (never '{', which starts the JSON snapshots
// written before it), a version byte, then a flate stream of: the sweep
// count, and per sweep its header as JSON, its kept-whole cells, retest
// attempts, class and error tables, and its grid blocks in binary. Persist
// streams it from a frozen view, so memory stays flat however big the
// sweeps are (a 1,024 x 8 sweep was a 3.4 GB JSON byte slice).
const (
	snapMagic   = 0xb1
	snapVersion = 1
)

type frozenSweep struct {
	head  snapshotSweep
	cells storeView
}

type binSnapshot struct{ sweeps []frozenSweep }

var _ raft.FSMSnapshot = (*binSnapshot)(nil)

func (s *binSnapshot) Persist(sink raft.SnapshotSink) error {
	err := s.write(sink)
	if err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *binSnapshot) Release() {}

func (s *binSnapshot) write(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteByte(snapMagic)
	bw.WriteByte(snapVersion)
	zw, _ := flate.NewWriter(bw, flate.BestSpeed) // the level is valid
	out := &snapWriter{w: zw}
	out.uv(uint64(len(s.sweeps)))
	for i := range s.sweeps {
		writeSweep(out, &s.sweeps[i])
	}
	if out.err != nil {
		return out.err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return bw.Flush()
}

// slotAttempts is a grid cell's retest attempts in a snapshot.
type slotAttempts struct {
	Slot     int32            `json:"slot"`
	Attempts []matrix.Attempt `json:"attempts"`
}

func writeSweep(w *snapWriter, fs *frozenSweep) {
	v := &fs.cells
	w.json(fs.head)
	w.json(sortedCells(v.extra))
	var rt []slotAttempts
	for slot, a := range v.retests {
		rt = append(rt, slotAttempts{slot, a})
	}
	slices.SortFunc(rt, func(a, b slotAttempts) int { return cmp.Compare(a.Slot, b.Slot) })
	w.json(rt)
	w.uv(uint64(len(v.classes)))
	for _, c := range v.classes {
		w.str(string(c))
	}
	errs := make([]probe.Error, len(v.errs))
	for i, e := range v.errs {
		errs[i] = *e
	}
	w.json(errs)
	w.uv(uint64(len(v.blocks)))
	for bi, b := range v.blocks {
		if b != nil {
			w.uv(uint64(bi) + 1)
			w.block(b)
		}
	}
	w.uv(0)
}

const (
	blkSamplesX = 1 << iota
	blkLat
	blkBW
	blkErr
)

// snapWriter writes varints and fixed-size fields, keeping the first error.
type snapWriter struct {
	w   io.Writer
	buf []byte
	err error
}

func (w *snapWriter) flush() {
	if w.err == nil && len(w.buf) > 0 {
		_, w.err = w.w.Write(w.buf)
	}
	w.buf = w.buf[:0]
}

func (w *snapWriter) uv(v uint64) {
	w.buf = binary.AppendUvarint(w.buf, v)
	w.flush()
}

func (w *snapWriter) str(s string) {
	w.buf = appendString(w.buf, s)
	w.flush()
}

func (w *snapWriter) json(v any) {
	b, err := json.Marshal(v)
	if err != nil && w.err == nil {
		w.err = err
	}
	w.str(string(b))
}

func (w *snapWriter) block(b *cellBlock) {
	var flags byte
	if b.samplesX != nil {
		flags |= blkSamplesX
	}
	if b.lat != nil {
		flags |= blkLat
	}
	if b.bw != nil {
		flags |= blkBW
	}
	if b.err != nil {
		flags |= blkErr
	}
	w.buf = append(w.buf, flags)
	w.buf = append(w.buf, b.class[:]...)
	for _, r := range b.round {
		w.buf = binary.LittleEndian.AppendUint16(w.buf, r)
	}
	w.buf = binary.AppendUvarint(w.buf, uint64(b.samples))
	if b.samplesX != nil {
		for _, s := range b.samplesX {
			w.buf = binary.LittleEndian.AppendUint32(w.buf, s)
		}
	}
	if b.lat != nil {
		// Field by field, so that flate sees runs of similar codes.
		for k := range len(latQ{}) {
			for j := range b.lat {
				w.buf = binary.LittleEndian.AppendUint16(w.buf, b.lat[j][k])
			}
		}
	}
	if b.bw != nil {
		for j := range b.bw {
			w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(b.bw[j].bytes))
			for _, q := range b.bw[j].q {
				w.buf = binary.LittleEndian.AppendUint16(w.buf, q)
			}
		}
	}
	if b.err != nil {
		for _, e := range b.err {
			w.buf = binary.LittleEndian.AppendUint16(w.buf, e)
		}
	}
	w.flush()
}

// readSnapshot reads either snapshot format.
func readSnapshot(r io.Reader) (map[string]*sweepRecord, []string, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	head, err := br.Peek(2)
	if err != nil {
		return nil, nil, err
	}
	if head[0] != snapMagic {
		return restoreJSON(br)
	}
	if head[1] != snapVersion {
		return nil, nil, fmt.Errorf("snapshot format version %d: this coordinator reads %d", head[1], snapVersion)
	}
	br.Discard(2)
	zr := flate.NewReader(br)
	defer zr.Close()
	in := &snapReader{r: bufio.NewReaderSize(zr, 1<<16)}
	sweeps := map[string]*sweepRecord{}
	var order []string
	for n := in.uv(); n > 0 && in.err == nil; n-- {
		rec := readSweep(in)
		if in.err != nil {
			break
		}
		sweeps[rec.Info.ID] = rec
		order = append(order, rec.Info.ID)
	}
	if in.err != nil {
		return nil, nil, in.err
	}
	return sweeps, order, nil
}

func readSweep(in *snapReader) *sweepRecord {
	var head snapshotSweep
	in.json(&head)
	rec := newRecord(head.Info, head.Spec, head.Nodes)
	for _, p := range head.Retests {
		rec.Retests[p.Pass] = p
	}
	for _, r := range head.Rounds {
		rec.Rounds[r] = true
	}
	st := rec.Cells
	var extra []matrix.Cell
	in.json(&extra)
	for _, c := range extra {
		st.extra[keyOf(&c)] = c
	}
	var rt []slotAttempts
	in.json(&rt)
	for _, a := range rt {
		st.retests[a.Slot] = a.Attempts
	}
	for n := in.uv(); n > 0 && in.err == nil; n-- {
		if _, ok := st.classOf(probe.Class(in.str())); !ok {
			in.fail("too many classes")
		}
	}
	var errs []probe.Error
	in.json(&errs)
	for i := range errs {
		st.errOf(&errs[i])
	}
	nb := in.uv()
	if nb > 0 && in.err == nil {
		if want := uint64(st.rails*st.n*st.n+blockLen-1) / blockLen; nb != want {
			in.fail(fmt.Sprintf("sweep %s: %d grid blocks, its nodes make %d", rec.Info.ID, nb, want))
			return rec
		}
		st.blocks = make([]*cellBlock, nb)
	}
	for in.err == nil {
		bi := in.uv()
		if bi == 0 {
			break
		}
		if bi > nb {
			in.fail("grid block out of range")
			break
		}
		b := in.block(len(st.classes), len(st.errs))
		if b != nil && !inGrid(b, int(bi-1), st.rails*st.n*st.n) {
			// Such a cell has no (src, dst, rail): reading it panicked.
			in.fail("grid block holds a cell past the sweep's grid")
		}
		st.blocks[bi-1] = b
	}
	st.count = len(st.extra)
	for _, b := range st.blocks {
		if b == nil {
			continue
		}
		for _, c := range b.class {
			if c != 0 {
				st.count++
			}
		}
	}
	return rec
}

// inGrid reports whether every cell of block bi has a slot below slots.
func inGrid(b *cellBlock, bi, slots int) bool {
	for j, c := range b.class {
		if c != 0 && bi*blockLen+j >= slots {
			return false
		}
	}
	return true
}

type snapReader struct {
	r   *bufio.Reader
	err error
}

func (r *snapReader) fail(msg string) {
	if r.err == nil {
		r.err = fmt.Errorf("snapshot: %s", msg)
	}
}

func (r *snapReader) uv() uint64 {
	if r.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(r.r)
	if err != nil {
		r.err = err
	}
	return v
}

// read returns the next n bytes. Past a megabyte the buffer grows with the
// data actually read, so a corrupt length cannot reserve memory the stream
// does not hold (FuzzSnapshotPayload: six bytes asked for 100 MB).
func (r *snapReader) read(n int) []byte {
	if r.err != nil || n < 0 || n > 1<<30 {
		r.fail("bad length")
		return nil
	}
	if n <= snapReadChunk {
		b := make([]byte, n)
		if _, err := io.ReadFull(r.r, b); err != nil {
			r.err = err
		}
		return b
	}
	var buf bytes.Buffer
	buf.Grow(snapReadChunk)
	if _, err := io.CopyN(&buf, r.r, int64(n)); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		r.err = err
		return nil
	}
	return buf.Bytes()
}

// snapReadChunk is the largest field read into a buffer of its stated size.
const snapReadChunk = 1 << 20

func (r *snapReader) str() string { return string(r.read(int(r.uv()))) }

func (r *snapReader) json(v any) {
	b := r.read(int(r.uv()))
	if r.err == nil {
		if err := json.Unmarshal(b, v); err != nil {
			r.err = err
		}
	}
}

func (r *snapReader) block(classes, errs int) *cellBlock {
	flags := r.read(1)
	if r.err != nil {
		return nil
	}
	b := &cellBlock{}
	copy(b.class[:], r.read(blockLen))
	rounds := r.read(2 * blockLen)
	b.samples = uint32(r.uv())
	if r.err != nil {
		return nil
	}
	for j := range b.round {
		b.round[j] = binary.LittleEndian.Uint16(rounds[2*j:])
	}
	for _, c := range b.class {
		// Code 0 is "no cell": flags without a class read as class -1.
		if c != 0 && (c&classMask == 0 || int(c&classMask) > classes) {
			r.fail("cell class out of range")
		}
		if c&flagLat != 0 {
			b.hasLat++
		}
	}
	if flags[0]&blkSamplesX != 0 {
		raw := r.read(4 * blockLen)
		if r.err == nil {
			b.samplesX = new([blockLen]uint32)
			for j := range b.samplesX {
				b.samplesX[j] = binary.LittleEndian.Uint32(raw[4*j:])
			}
		}
	}
	if flags[0]&blkLat != 0 {
		raw := r.read(2 * len(latQ{}) * blockLen)
		if r.err == nil {
			b.lat = new([blockLen]latQ)
			for k := range len(latQ{}) {
				for j := range b.lat {
					b.lat[j][k] = binary.LittleEndian.Uint16(raw[2*(k*blockLen+j):])
				}
			}
		}
	}
	if flags[0]&blkBW != 0 {
		raw := r.read(14 * blockLen)
		if r.err == nil {
			b.bw = new([blockLen]bwQ)
			for j := range b.bw {
				e := raw[14*j:]
				b.bw[j].bytes = int64(binary.LittleEndian.Uint64(e))
				for k := range b.bw[j].q {
					b.bw[j].q[k] = binary.LittleEndian.Uint16(e[8+2*k:])
				}
			}
		}
	}
	if flags[0]&blkErr != 0 {
		raw := r.read(2 * blockLen)
		if r.err == nil {
			b.err = new([blockLen]uint16)
			for j := range b.err {
				b.err[j] = binary.LittleEndian.Uint16(raw[2*j:])
			}
		}
	}
	hasBW := false
	for _, c := range b.class {
		hasBW = hasBW || c&flagBW != 0
	}
	if b.lat == nil && b.hasLat > 0 || b.bw == nil && hasBW {
		r.fail("grid block has figure flags but no figures")
	}
	if b.err != nil {
		for _, e := range b.err {
			if int(e) > errs {
				r.fail("cell error out of range")
			}
		}
	}
	return b
}
