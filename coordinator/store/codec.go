package store

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// EntryRoundBin is a round's cells in the compact binary form below; rounds
// whose cells do not all fit the sweep's grid (see NodeIndex.slotOf) stay
// JSON (EntryRound), and old JSON entries stay readable.
//
// Layout: one version byte, then a flate stream of: sweep ID, round, cell
// count, the entry's class and error tables, and one column per field
// (source, destination, rail, class and flags, round, error, samples, each
// latency and bandwidth figure), each column length-prefixed. Nodes are
// indices into the sweep's node list; figures are quant codes, delta-coded
// against their neighbour so that flate finds repeats. A 1,024-node round
// (8,184 cells) takes about 75 KB where JSON took 3.4 MB.
const (
	EntryRoundBin   EntryType = 5
	roundBinVersion           = 1
)

const (
	colSrc = iota
	colDst
	colRail
	colMeta // class index | flagLat | flagBW
	colRound
	colErr
	colSamples
	colLat0  // seven latency codes: colLat0 + latQ index
	colBytes = colLat0 + len(latQ{})
	colBW0   = colBytes + 1 // three bandwidth codes
	nCols    = colBW0 + 3
)

var flaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestSpeed)
	return w
}}

var inflaters = sync.Pool{New: func() any { return flate.NewReader(nil) }}

// EncodeRound encodes a round entry, binary when every cell fits x's grid.
func EncodeRound(x *NodeIndex, r sweep.RoundResult) ([]byte, error) {
	sc := roundScratch.Get().(*roundEncoder)
	defer roundScratch.Put(sc)
	cols := &sc.cols
	for i := range cols {
		cols[i] = cols[i][:0]
	}
	classes := map[probe.Class]int{}
	var classList []probe.Class
	errIdx := map[probe.Error]int{}
	var errList []probe.Error
	var prevP50, prevStdev, prevBytes int64
	var memo idxMemo
	var prevBW [3]int64
	for i := range r.Cells {
		c := &r.Cells[i]
		si, di, ok := x.indices(c, &memo)
		if !ok || len(c.Retests) > 0 {
			return EncodeEntry(EntryRound, r)
		}
		ci, ok := classes[c.Class]
		if !ok {
			if len(classList) >= maxClasses {
				return EncodeEntry(EntryRound, r)
			}
			ci = len(classList)
			classes[c.Class] = ci
			classList = append(classList, c.Class)
		}
		meta := byte(ci)
		if c.Latency != nil {
			meta |= flagLat
		}
		if c.Bandwidth != nil {
			meta |= flagBW
		}
		cols[colSrc] = binary.AppendUvarint(cols[colSrc], uint64(si))
		cols[colDst] = binary.AppendUvarint(cols[colDst], uint64(di))
		cols[colRail] = binary.AppendUvarint(cols[colRail], uint64(c.Rail))
		cols[colMeta] = append(cols[colMeta], meta)
		cols[colRound] = binary.AppendVarint(cols[colRound], int64(c.Round-r.Round))
		e := 0
		if c.Error != nil {
			ei, ok := errIdx[*c.Error]
			if !ok {
				ei = len(errList)
				errIdx[*c.Error] = ei
				errList = append(errList, *c.Error)
			}
			e = ei + 1
		}
		cols[colErr] = binary.AppendUvarint(cols[colErr], uint64(e))
		if l := c.Latency; l != nil {
			cols[colSamples] = binary.AppendUvarint(cols[colSamples], uint64(l.Samples))
			q := latQ{quant(l.MinNs), quant(l.P50Ns), quant(l.P90Ns), quant(l.P99Ns), quant(l.P999Ns), quant(l.MaxNs), quant(l.StdevNs)}
			for k, d := range latDeltas(&q, prevP50, prevStdev) {
				cols[colLat0+k] = binary.AppendVarint(cols[colLat0+k], d)
			}
			prevP50, prevStdev = int64(q[1]), int64(q[6])
		}
		if b := c.Bandwidth; b != nil {
			cols[colBytes] = binary.AppendVarint(cols[colBytes], b.Bytes-prevBytes)
			prevBytes = b.Bytes
			for k, v := range [3]float64{b.Gbps, b.MsgRate, b.Duration} {
				q := int64(quant(v))
				cols[colBW0+k] = binary.AppendVarint(cols[colBW0+k], q-prevBW[k])
				prevBW[k] = q
			}
		}
	}
	raw := appendString(sc.raw[:0], r.SweepID)
	raw = binary.AppendUvarint(raw, uint64(r.Round))
	raw = binary.AppendUvarint(raw, uint64(len(r.Cells)))
	raw = binary.AppendUvarint(raw, uint64(len(classList)))
	for _, c := range classList {
		raw = appendString(raw, string(c))
	}
	errs, err := json.Marshal(errList)
	if err != nil {
		return nil, err
	}
	raw = appendString(raw, string(errs))
	// The columns go to flate from where they are: no copy into one buffer.
	out := &sc.out
	out.Reset()
	out.WriteByte(byte(EntryRoundBin))
	out.WriteByte(roundBinVersion)
	zw := flaters.Get().(*flate.Writer)
	defer flaters.Put(zw)
	zw.Reset(out)
	for _, col := range cols {
		raw = binary.AppendUvarint(raw, uint64(len(col)))
		if _, err := zw.Write(raw); err != nil {
			return nil, err
		}
		if _, err := zw.Write(col); err != nil {
			return nil, err
		}
		raw = raw[:0]
	}
	sc.raw = raw
	if err := zw.Close(); err != nil {
		return nil, err
	}
	// raft keeps the entry, so it gets its own exact-sized copy.
	return bytes.Clone(out.Bytes()), nil
}

// roundEncoder is EncodeRound's scratch space, reused across rounds: the
// columns of a 1,024-node round are about 300 KB, regrown from nothing for
// every round before.
type roundEncoder struct {
	cols [nCols][]byte
	raw  []byte
	out  bytes.Buffer
}

var roundScratch = sync.Pool{New: func() any { return new(roundEncoder) }}

// latDeltas turns latency codes into what is stored: p50 and stdev against
// the previous cell's, min and p90 against p50, then each tail figure
// against the one below it.
func latDeltas(q *latQ, prevP50, prevStdev int64) [7]int64 {
	v := func(i int) int64 { return int64(q[i]) }
	return [7]int64{v(1) - v(0), v(1) - prevP50, v(2) - v(1), v(3) - v(2), v(4) - v(3), v(5) - v(4), v(6) - prevStdev}
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// binRound is a decoded binary round entry; next walks its cells.
type binRound struct {
	SweepID string
	Round   int
	Cells   int
	classes []probe.Class
	errs    []probe.Error
	cols    [nCols]reader
	prevP50 int64
	prevStd int64
	prevB   int64
	prevBW  [3]int64
	buf     *bytes.Buffer // the inflated entry the columns read (release)
}

// binCell is one decoded cell: node indices and quant codes.
type binCell struct {
	src, dst, rail int
	meta           uint8
	round          int
	err            int // index+1 into the entry's error table; 0 = none
	samples        uint32
	lat            latQ
	bw             bwQ
}

var errCorrupt = errors.New("corrupt binary round entry")

// decodeRoundBin inflates and parses a binary round entry's header; cells
// are read with next. b is the entry without its type byte.
func decodeRoundBin(b []byte) (*binRound, error) {
	if len(b) == 0 || b[0] != roundBinVersion {
		return nil, fmt.Errorf("binary round entry version %v: this coordinator reads %d", b[:min(len(b), 1)], roundBinVersion)
	}
	zr := inflaters.Get().(io.ReadCloser)
	defer inflaters.Put(zr)
	src := bytes.NewReader(b[1:]) // a ByteReader: flate reads no further than its stream
	if err := zr.(flate.Resetter).Reset(src, nil); err != nil {
		return nil, err
	}
	buf := inflated.Get().(*bytes.Buffer)
	buf.Reset()
	r := &binRound{buf: buf}
	ok := false
	defer func() {
		if !ok {
			r.release()
		}
	}()
	if _, err := buf.ReadFrom(zr); err != nil {
		return nil, fmt.Errorf("binary round entry: %w", err)
	}
	if src.Len() != 0 {
		return nil, errCorrupt
	}
	rd := reader{b: buf.Bytes()}
	r.SweepID, r.Round, r.Cells = rd.str(), int(rd.uv()), int(rd.uv())
	for n := rd.uv(); n > 0 && !rd.bad; n-- {
		r.classes = append(r.classes, probe.Class(rd.str()))
	}
	if errs := rd.str(); !rd.bad {
		if err := json.Unmarshal([]byte(errs), &r.errs); err != nil {
			return nil, fmt.Errorf("binary round entry errors: %w", err)
		}
	}
	for i := range r.cols {
		n := rd.uv()
		r.cols[i] = reader{b: rd.bytes(int(n))}
	}
	if rd.bad || len(rd.b) != 0 || r.Cells < 0 {
		return nil, errCorrupt
	}
	ok = true
	return r, nil
}

// inflated holds round entries' inflated bytes (about 300 KB at 1,024
// nodes) between entries: every replica inflates one per round.
var inflated = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// release hands the inflated bytes back; r's columns must not be read
// afterwards (strings and errors it decoded are copies).
func (r *binRound) release() {
	if r.buf != nil {
		for i := range r.cols {
			r.cols[i] = reader{}
		}
		inflated.Put(r.buf)
		r.buf = nil
	}
}

// next decodes the following cell into c.
func (r *binRound) next(c *binCell) error {
	c.src, c.dst, c.rail = int(r.cols[colSrc].uv()), int(r.cols[colDst].uv()), int(r.cols[colRail].uv())
	c.meta = r.cols[colMeta].byte()
	c.round = r.Round + int(r.cols[colRound].v())
	c.err = int(r.cols[colErr].uv())
	if int(c.meta&classMask) >= len(r.classes) || c.err > len(r.errs) {
		return errCorrupt
	}
	if c.meta&flagLat != 0 {
		c.samples = uint32(r.cols[colSamples].uv())
		var d [7]int64
		for k := range d {
			d[k] = r.cols[colLat0+k].v()
		}
		p50 := r.prevP50 + d[1]
		lo := p50 - d[0]
		p90 := p50 + d[2]
		p99 := p90 + d[3]
		p999 := p99 + d[4]
		hi := p999 + d[5]
		std := r.prevStd + d[6]
		c.lat = latQ{u16(lo), u16(p50), u16(p90), u16(p99), u16(p999), u16(hi), u16(std)}
		r.prevP50, r.prevStd = p50, std
	}
	if c.meta&flagBW != 0 {
		r.prevB += r.cols[colBytes].v()
		c.bw.bytes = r.prevB
		for k := range r.prevBW {
			r.prevBW[k] += r.cols[colBW0+k].v()
			c.bw.q[k] = u16(r.prevBW[k])
		}
	}
	for i := range r.cols {
		if r.cols[i].bad {
			return errCorrupt
		}
	}
	return nil
}

func u16(v int64) uint16 { return uint16(min(max(v, 0), 0xffff)) }

// cell turns a decoded cell into a matrix.Cell against the sweep's nodes.
func (r *binRound) cell(x *NodeIndex, c *binCell) (matrix.Cell, error) {
	if c.src >= x.n || c.dst >= x.n || c.rail >= x.rails {
		return matrix.Cell{}, errCorrupt
	}
	s, d := x.nodes[c.src], x.nodes[c.dst]
	out := matrix.Cell{Src: s.Name, Dst: d.Name, Rail: c.rail, SrcDevice: portDevice(s, c.rail), DstDevice: portDevice(d, c.rail),
		Round: c.round, Class: r.classes[c.meta&classMask]}
	if c.err > 0 {
		e := r.errs[c.err-1]
		out.Error = &e
	}
	if c.meta&flagLat != 0 {
		q := &c.lat
		out.Latency = &probe.Latency{Samples: int(c.samples), MinNs: unquant(q[0]), P50Ns: unquant(q[1]), P90Ns: unquant(q[2]),
			P99Ns: unquant(q[3]), P999Ns: unquant(q[4]), MaxNs: unquant(q[5]), StdevNs: unquant(q[6])}
	}
	if c.meta&flagBW != 0 {
		out.Bandwidth = &probe.Bandwidth{Gbps: unquant(c.bw.q[0]), MsgRate: unquant(c.bw.q[1]), Bytes: c.bw.bytes, Duration: unquant(c.bw.q[2])}
	}
	return out, nil
}

// reader reads varints and strings; a short or bad read sets bad.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) uv() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) v() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.bad = true
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) bytes(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.bad = true
		return nil
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) str() string { return string(r.bytes(int(r.uv()))) }

// applyRoundBin applies a binary round entry. Main-round cells go straight
// into the sweep's grid as codes, without building a matrix.Cell each;
// confirmation rounds, which merge attempts, take the general path.
func (f *FSM) applyRoundBin(b []byte) error {
	r, err := decodeRoundBin(b)
	if err != nil {
		return err
	}
	defer r.release()
	f.mu.Lock()
	defer f.mu.Unlock()
	rec, ok := f.sweeps[r.SweepID]
	if !ok || rec.Rounds[r.Round] {
		return nil // aged out, or a round re-run by a new leader
	}
	retest := rec.isRetestRound(r.Round)
	st := rec.Cells
	general := retest
	classes := make([]uint8, len(r.classes))
	for i, c := range r.classes {
		code, ok := st.classOf(c)
		classes[i], general = code, general || !ok
	}
	errs := make([]uint16, len(r.errs)+1)
	for i := range r.errs {
		code, ok := st.errOf(&r.errs[i])
		errs[i+1], general = code, general || !ok
	}
	var c binCell
	for range r.Cells {
		if err := r.next(&c); err != nil {
			return err
		}
		if c.src >= st.n || c.dst >= st.n || c.src == c.dst || c.rail >= st.rails || c.round < 0 || c.round > 0xffff {
			return errCorrupt
		}
		if general {
			mc, err := r.cell(&st.NodeIndex, &c)
			if err != nil {
				return err
			}
			rec.merge(mc, retest)
			continue
		}
		var lat *latQ
		if c.meta&flagLat != 0 {
			lat = &c.lat
		}
		var bw *bwQ
		if c.meta&flagBW != 0 {
			bw = &c.bw
		}
		slot := st.slot(c.src, c.dst, c.rail)
		st.putDense(slot, classes[c.meta&classMask], uint16(c.round), lat, c.samples, bw, errs[c.err])
		st.setRetests(slot, nil)
	}
	f.roundDone(rec, r.Round, retest)
	return nil
}
