package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/klauspost/compress/flate"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// RoundReader is a decoded round entry: its header and tables at once, its
// grid cells one at a time (Next), as codes, so that a replica applies a
// 1,024-node round without building a cell value per cell.
type RoundReader struct {
	RoundHead

	cols    [nCols]reader // one per column; a short or bad read sets its err
	flows   bool          // the entry has the flow columns (version 2)
	prevP50 int64
	prevStd int64
	prevB   int64
	prevBW  [3]int64
	buf     *bytes.Buffer // the inflated entry the columns read (Release)
}

// GridCodes is one decoded grid cell, in the widths a grid cell has (56
// bytes, where ints made it 88: a leader writes and reads one a cell).
type GridCodes struct {
	Src, Dst uint32 // indices into the sweep's start record
	Samples  uint32
	Err      uint32 // index+1 into Errors; 0 = none
	Rail     uint16
	Round    uint16
	Meta     uint8 // index into Classes | FlagLat | FlagBW
	Lat      LatQ
	Flow     uint16 // the flows sit in Lat's padding before BW: still 56 bytes
	BackFlow uint16
	BW       BWQ
}

// ErrCorruptRound is a round entry whose cells do not add up.
var ErrCorruptRound = errors.New("corrupt round entry")

// ReadRound inflates a round entry and reads its header, tables and whole
// cells; Next reads its grid cells. Release hands its buffer back.
func ReadRound(b []byte) (*RoundReader, error) {
	version := byte(RoundVersion)
	if len(b) > 0 && b[0] == roundV1 {
		version = roundV1
	}
	if err := checkVersion("round", version, b); err != nil {
		return nil, err
	}
	zr := inflaters.Get().(io.ReadCloser)
	defer inflaters.Put(zr)
	src := bytes.NewReader(b[1:]) // a ByteReader: flate reads no further than its stream
	if err := zr.(flate.Resetter).Reset(src, nil); err != nil {
		return nil, err
	}
	buf := inflated.Get().(*bytes.Buffer)
	buf.Reset()
	rr := &RoundReader{buf: buf, flows: version != roundV1}
	ok := false
	defer func() {
		if !ok {
			rr.Release()
		}
	}()
	if _, err := buf.ReadFrom(zr); err != nil {
		return nil, fmt.Errorf("round entry: %w", err)
	}
	if src.Len() != 0 {
		return nil, ErrCorruptRound
	}
	r := reader{b: buf.Bytes()}
	rr.SweepID, rr.Round, rr.Cells = r.str(), int(r.u32()), int(r.u32())
	rr.Classes = getList(&r, func(r *reader, c *probe.Class) { *c = probe.Class(r.str()) })
	rr.Errors = getList(&r, (*reader).errorFields)
	cols, cell := rr.cols[:], (*reader).cell
	if !rr.flows {
		cols, cell = rr.cols[:colFlow], (*reader).cellNoFlow
	}
	for i := range cols {
		n := r.u64()
		if r.err != nil || n > uint64(len(r.b)) {
			return nil, ErrCorruptRound
		}
		cols[i] = reader{b: r.b[:n:n]}
		r.b = r.b[n:]
	}
	rr.Whole = getList(&r, cell)
	if err := r.done(); err != nil || len(rr.Classes) > MaxClasses {
		return nil, ErrCorruptRound
	}
	ok = true
	return rr, nil
}

var inflaters = sync.Pool{New: func() any { return flate.NewReader(nil) }}

// inflated holds round entries' inflated bytes (about 300 KB at 1,024
// nodes) between entries: every replica inflates one per round.
var inflated = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Release hands the inflated bytes back; Next must not be called after it
// (what the header and Whole hold are copies).
func (rr *RoundReader) Release() {
	if rr.buf != nil {
		for i := range rr.cols {
			rr.cols[i] = reader{}
		}
		inflated.Put(rr.buf)
		rr.buf = nil
	}
}

// Next decodes the following grid cell into c.
func (rr *RoundReader) Next(c *GridCodes) error {
	cols := &rr.cols
	// Every field is checked against its width before it is narrowed: a
	// corrupt entry must not wrap into a valid index.
	src, dst, rail := cols[colSrc].u64(), cols[colDst].u64(), cols[colRail].u64()
	c.Meta = cols[colMeta].byte()
	round := int64(rr.Round) + cols[colRound].i64()
	errc := cols[colErr].u64()
	if src > math.MaxUint32 || dst > math.MaxUint32 || rail > math.MaxUint16 || round < 0 || round > math.MaxUint16 ||
		int(c.Meta&ClassMask) >= len(rr.Classes) || errc > uint64(len(rr.Errors)) {
		return ErrCorruptRound
	}
	c.Src, c.Dst, c.Rail, c.Round, c.Err = uint32(src), uint32(dst), uint16(rail), uint16(round), uint32(errc)
	c.Flow, c.BackFlow = 0, 0
	if rr.flows {
		c.Flow, c.BackFlow = cols[colFlow].u16(), cols[colBackFlow].u16()
	}
	if c.Meta&FlagLat != 0 {
		samples := cols[colSamples].u64()
		if samples > math.MaxUint32 {
			return ErrCorruptRound
		}
		c.Samples = uint32(samples)
		var d [7]int64
		for k := range d {
			d[k] = cols[colLat0+k].i64()
		}
		p50 := rr.prevP50 + d[1]
		lo := p50 - d[0]
		p90 := p50 + d[2]
		p99 := p90 + d[3]
		p999 := p99 + d[4]
		hi := p999 + d[5]
		std := rr.prevStd + d[6]
		c.Lat = LatQ{u16(lo), u16(p50), u16(p90), u16(p99), u16(p999), u16(hi), u16(std)}
		rr.prevP50, rr.prevStd = p50, std
	}
	if c.Meta&FlagBW != 0 {
		rr.prevB += cols[colBytes].i64()
		c.BW.Bytes = rr.prevB
		for k := range rr.prevBW {
			rr.prevBW[k] += cols[colBW0+k].i64()
			c.BW.Q[k] = u16(rr.prevBW[k])
		}
	}
	for i := range cols {
		if cols[i].err != nil {
			return ErrCorruptRound
		}
	}
	return nil
}

func u16(v int64) uint16 { return uint16(min(max(v, 0), 0xffff)) }

// Latency decodes a grid cell's latency codes.
func (q LatQ) Latency(samples uint32) probe.Latency { return q.figures(int(samples), quantTable()) }

// figures is Latency with the sample count as it came and the table
// already in hand.
func (q *LatQ) figures(samples int, t *[1 << 16]float64) probe.Latency {
	return probe.Latency{Samples: samples, MinNs: t[q[0]], P50Ns: t[q[1]], P90Ns: t[q[2]],
		P99Ns: t[q[3]], P999Ns: t[q[4]], MaxNs: t[q[5]], StdevNs: t[q[6]]}
}

// Bandwidth decodes a grid cell's bandwidth codes.
func (q BWQ) Bandwidth() probe.Bandwidth {
	return probe.Bandwidth{Gbps: Unquant(q.Q[0]), MsgRate: Unquant(q.Q[1]), Bytes: q.Bytes, Duration: Unquant(q.Q[2])}
}

// LatCodes and BWCodes are what Latency and Bandwidth decode from.
func LatCodes(l *probe.Latency) LatQ {
	return LatQ{Quant(l.MinNs), Quant(l.P50Ns), Quant(l.P90Ns), Quant(l.P99Ns), Quant(l.P999Ns), Quant(l.MaxNs), Quant(l.StdevNs)}
}

func BWCodes(b *probe.Bandwidth) BWQ {
	return BWQ{Bytes: b.Bytes, Q: [3]uint16{Quant(b.Gbps), Quant(b.MsgRate), Quant(b.Duration)}}
}
