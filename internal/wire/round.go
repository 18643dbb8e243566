package wire

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"sync"

	"github.com/klauspost/compress/flate"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// A round entry is one round's cells. Layout: the version byte, then a
// flate stream of: sweep ID, round, grid cell count, the entry's class and
// error tables, one column per field of the grid cells (source,
// destination, rail, class and flags, round, error, samples, each latency
// and bandwidth figure, flow, back flow), each column length-prefixed, and
// last the cells kept whole. Grid cells name nodes by their index in the
// sweep's start record; figures are quant codes, delta-coded against their
// neighbour so that flate finds repeats. A 1,024-node round (8,184 cells)
// takes about 75 KB where JSON took 3.4 MB.
//
// Version 2 added the flow and back flow columns and each whole cell's
// flows. A reader reads version 1 too (flows 0): a coordinator upgraded
// in place replays the entries its older self logged after its last
// snapshot.
const RoundVersion = 2

// roundV1 is the layout before flows.
const roundV1 = 1

const (
	colSrc = iota
	colDst
	colRail
	colMeta // class index | FlagLat | FlagBW
	colRound
	colErr
	colSamples
	colLat0     // seven latency codes: colLat0 + LatQ index
	colBytes    = colLat0 + len(LatQ{})
	colBW0      = colBytes + 1 // three bandwidth codes
	colFlow     = colBW0 + 3   // version 1 ends before it
	colBackFlow = colFlow + 1
	nCols       = colBackFlow + 1
)

// GridCell is a cell the encoder writes in grid form: node indices into
// the sweep's start record, same rail at both ends, round 0..65535.
type GridCell struct {
	Src, Dst, Rail int
	Round          int
	Class          probe.Class
	Error          *probe.Error
	Latency        *probe.Latency
	Bandwidth      *probe.Bandwidth
	// LatQ, when set, is Latency's codes as they came (a TaskResultQ
	// answer's): written as they are. Set without Latency, it is the
	// cell's latency on its own, of Samples samples: a cell that never had
	// its figures decoded.
	LatQ     *LatQ
	Samples  uint32
	Flow     uint16 // the initiator QP's UDP source port; 0 = unknown
	BackFlow uint16 // the responder QP's; 0 = unknown
}

// RoundEncoder builds one round entry; its scratch space is reused across
// rounds (the columns of a 1,024-node round are about 300 KB).
type RoundEncoder struct {
	sweepID   string
	round     int
	cells     int
	cols      [nCols][]byte
	classList []probe.Class // a scan: a round has a few classes, "ok" first
	errIdx    map[probe.Error]int
	errList   []probe.Error
	whole     []Cell
	codes     []GridCodes // the grid cells as Next decodes them (FinishKeep)
	prevP50   int64
	prevStd   int64
	prevBytes int64
	prevBW    [3]int64
	raw       []byte
	out       bytes.Buffer
}

var roundEncoders = sync.Pool{New: func() any {
	return &RoundEncoder{errIdx: map[probe.Error]int{}}
}}

// NewRoundEncoder starts the entry of one round; Finish hands it back.
func NewRoundEncoder(sweepID string, round int) *RoundEncoder {
	e := roundEncoders.Get().(*RoundEncoder)
	e.sweepID, e.round, e.cells = sweepID, round, 0
	for i := range e.cols {
		e.cols[i] = e.cols[i][:0]
	}
	clear(e.errIdx)
	e.classList, e.errList, e.whole, e.codes = e.classList[:0], e.errList[:0], e.whole[:0], e.codes[:0]
	e.prevP50, e.prevStd, e.prevBytes, e.prevBW = 0, 0, 0, [3]int64{}
	return e
}

// Grid adds a cell in grid form; false when the entry's class table is
// full or a field is past a grid cell's width (GridCodes), and the cell
// must go whole.
func (e *RoundEncoder) Grid(c *GridCell) bool {
	if uint64(c.Src) > math.MaxUint32 || uint64(c.Dst) > math.MaxUint32 || uint(c.Rail) > math.MaxUint16 || uint(c.Round) > math.MaxUint16 ||
		c.Latency != nil && uint64(c.Latency.Samples) > math.MaxUint32 {
		return false
	}
	ci := slices.Index(e.classList, c.Class)
	if ci < 0 {
		if len(e.classList) >= MaxClasses {
			return false
		}
		ci = len(e.classList)
		e.classList = append(e.classList, c.Class)
	}
	meta := byte(ci)
	hasLat := c.Latency != nil || c.LatQ != nil
	if hasLat {
		meta |= FlagLat
	}
	if c.Bandwidth != nil {
		meta |= FlagBW
	}
	cols := &e.cols
	cols[colSrc] = appendUv(cols[colSrc], uint64(c.Src))
	cols[colDst] = appendUv(cols[colDst], uint64(c.Dst))
	cols[colRail] = appendUv(cols[colRail], uint64(c.Rail))
	cols[colMeta] = append(cols[colMeta], meta)
	cols[colRound] = appendZig(cols[colRound], int64(c.Round-e.round))
	errc := 0
	if c.Error != nil {
		ei, ok := e.errIdx[*c.Error]
		if !ok {
			ei = len(e.errList)
			e.errIdx[*c.Error] = ei
			e.errList = append(e.errList, *c.Error)
		}
		errc = ei + 1
	}
	cols[colErr] = appendUv(cols[colErr], uint64(errc))
	cols[colFlow] = appendUv(cols[colFlow], uint64(c.Flow))
	cols[colBackFlow] = appendUv(cols[colBackFlow], uint64(c.BackFlow))
	// The kept codes are built here and appended whole: filled in place
	// after the append, they were written to memory twice.
	g := GridCodes{Src: uint32(c.Src), Dst: uint32(c.Dst), Rail: uint16(c.Rail), Meta: meta, Round: uint16(c.Round), Err: uint32(errc),
		Flow: c.Flow, BackFlow: c.BackFlow}
	if hasLat {
		g.Samples = c.Samples
		if c.Latency != nil {
			g.Samples = uint32(c.Latency.Samples)
		}
		cols[colSamples] = appendUv(cols[colSamples], uint64(g.Samples))
		if c.LatQ != nil {
			g.Lat = *c.LatQ
		} else {
			g.Lat = LatCodes(c.Latency)
		}
		d := latDeltas(&g.Lat, e.prevP50, e.prevStd)
		for k := range d {
			cols[colLat0+k] = appendZig(cols[colLat0+k], d[k])
		}
		e.prevP50, e.prevStd = int64(g.Lat[1]), int64(g.Lat[6])
	}
	if b := c.Bandwidth; b != nil {
		cols[colBytes] = appendZig(cols[colBytes], b.Bytes-e.prevBytes)
		e.prevBytes = b.Bytes
		g.BW = BWCodes(b)
		for k, q := range g.BW.Q {
			cols[colBW0+k] = appendZig(cols[colBW0+k], int64(q)-e.prevBW[k])
			e.prevBW[k] = int64(q)
		}
	}
	e.codes = append(e.codes, g)
	e.cells++
	return true
}

// Whole adds a cell kept whole; the entry refers to it, so c must not
// change before Finish.
func (e *RoundEncoder) Whole(c *Cell) { e.whole = append(e.whole, *c) }

// Finish returns head followed by the entry, in one exact-sized copy of
// its own (raft keeps it), and hands the encoder back; e must not be used
// afterwards. The head is a raft entry's type byte, which prepended
// afterwards copied every round's entry again (100 KB a round at 4,096
// nodes).
func (e *RoundEncoder) Finish(head []byte) ([]byte, error) {
	defer roundEncoders.Put(e)
	w := writer(e.raw[:0])
	w.str(e.sweepID)
	w.u64(uint64(e.round))
	w.u64(uint64(e.cells))
	putList(&w, e.classList, func(w *writer, c *probe.Class) { w.str(string(*c)) })
	putList(&w, e.errList, (*writer).errorFields)
	// The columns go to flate from where they are: no copy into one buffer.
	e.out.Reset()
	e.out.Write(head)
	e.out.WriteByte(RoundVersion)
	zw := flaters.Get().(*flate.Writer)
	defer flaters.Put(zw)
	zw.Reset(&e.out)
	for _, col := range e.cols {
		w.u64(uint64(len(col)))
		if _, err := zw.Write(w); err != nil {
			return nil, err
		}
		if _, err := zw.Write(col); err != nil {
			return nil, err
		}
		w = w[:0]
	}
	putList(&w, e.whole, (*writer).cell)
	if _, err := zw.Write(w); err != nil {
		return nil, err
	}
	e.raw = w[:0]
	clear(e.whole) // no pointers kept into the caller's cells
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return bytes.Clone(e.out.Bytes()), nil
}

var flaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestSpeed)
	return w
}}

// latDeltas turns latency codes into what is stored: p50 and stdev against
// the previous cell's, min and p90 against p50, then each tail figure
// against the one below it.
func latDeltas(q *LatQ, prevP50, prevStdev int64) [7]int64 {
	v := func(i int) int64 { return int64(q[i]) }
	return [7]int64{v(1) - v(0), v(1) - prevP50, v(2) - v(1), v(3) - v(2), v(4) - v(3), v(5) - v(4), v(6) - prevStdev}
}

// appendZig is binary.AppendVarint, with the one- and two-byte cases
// (every delta of a round's figures but the odd outlier) first.
func appendZig(b []byte, v int64) []byte {
	return appendUv(b, uint64(v<<1)^uint64(v>>63))
}

// appendUv is binary.AppendUvarint, the one- and two-byte cases (a node
// index below 16,384) first.
func appendUv(b []byte, u uint64) []byte {
	if u < 0x80 {
		return append(b, byte(u))
	}
	if u < 1<<14 {
		return append(b, byte(u)|0x80, byte(u>>7))
	}
	return binary.AppendUvarint(b, u)
}
