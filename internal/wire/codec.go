// Package wire owns every message rdmamesh processes send each other and
// every record they keep: the worker API's tasks, results and probe-session
// messages, and the coordinator's raft entries and snapshots. Each has one
// binary codec whose first byte is that message's layout version; a decoder
// refuses any other version with an error naming the message and the fix.
// JSON is for people: the public /api/v1, the worker's read endpoints
// (inventory, health) and exports, never for what one process hands another.
//
// Why a package of its own rather than internal/probe: probe is the
// vocabulary that the matrix, the public API and both fabric engines share
// (failure classes, errors, endpoints, QP info, measurements, ports). Laying
// messages and records out is a different job with a different reason to
// change, and the records need the public API's SweepInfo, which itself
// imports probe. So probe stays the words and wire is the sentences: wire
// imports probe and api, and nothing analytic (matrix, the sweep engine)
// is ever encoded as it is. The coordinator's store converts its records
// to the analysis types at its boundary, so matrix can change without
// touching the log.
//
// Layout of every message: the version byte, then the fields in declaration
// order: integers as zigzag varints, counts and unsigned values as uvarints,
// strings with a uvarint length, floats as 8 little-endian bytes (quant
// codes, where a message carries figures as codes, as 2), times as
// UnixNano (0 = the zero time), optional values behind a presence byte.
// Raft entries put their entry type before the message (coordinator/store).
//
// Words used in this package's names and comments:
//
//   - room: space the caller hands a decoder (AnswerRoom, room): used when
//     it is large enough, allocated otherwise, so a hot loop that keeps its
//     room decodes without allocating.
//   - memo: what a TaskEncoder or TaskDecoder remembers of the last task,
//     its rails section's bytes; the next task's section is compared with
//     it byte for byte and, when equal, neither encoded nor decoded again.
//   - borrow: a borrowing TaskDecoder (Borrow) hands out names and tickets
//     that point into the message's bytes instead of copies, valid only
//     while those bytes are.
//   - kept: a round entry's content kept by its encoder (FinishKeep,
//     RoundCodes) so the replica that wrote the entry can apply it without
//     decoding it; a cell "kept whole" is one that does not fit the grid
//     and travels as a Cell in a round entry or snapshot.
//   - lite: a plain cell (ok, latency alone, as codes, same rail) that the
//     coordinator carries by node positions and adds to a round entry as a
//     GridCell without building a Cell; the entry's layout is the same.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// Codec is one message type's binary form.
type Codec[T any] struct {
	name    string
	version byte
	// oldest is the oldest layout Decode still reads (0: version only),
	// for messages kept in the raft log: a log written before a field was
	// added replays; its get reads reader.ver to know what is there.
	oldest byte
	put    func(*writer, *T)
	get    func(*reader, *T)
	// shared: decoded strings are interned (intern.go), for messages
	// whose strings repeat across millions of decodes.
	shared bool
}

// Name is the message's name in errors.
func (c *Codec[T]) Name() string { return c.name }

// Version is the layout version this build writes and reads.
func (c *Codec[T]) Version() byte { return c.version }

// Append appends v's binary form to b.
func (c *Codec[T]) Append(b []byte, v *T) []byte {
	w := writer(append(b, c.version))
	c.put(&w, v)
	return w
}

// Decode reads what Append wrote. Every byte must be used.
func (c *Codec[T]) Decode(b []byte) (T, error) {
	var v T
	if len(b) == 0 || b[0] < max(c.oldest, 1) || b[0] > c.version || c.oldest == 0 && b[0] != c.version {
		if err := checkVersion(c.name, c.version, b); err != nil {
			return v, err
		}
	}
	r := reader{b: b[1:], shared: c.shared, ver: b[0]}
	c.get(&r, &v)
	if err := r.done(); err != nil {
		return v, fmt.Errorf("%s message: %w", c.name, err)
	}
	return v, nil
}

// checkVersion reads the leading version byte of a message named name.
func checkVersion(name string, want byte, b []byte) error {
	switch {
	case len(b) == 0:
		return fmt.Errorf("empty %s message", name)
	case b[0] != want:
		return &VersionError{Message: name, Got: b[0], Want: want}
	}
	return nil
}

// VersionError is a message in a layout this build does not read.
type VersionError struct {
	Message   string
	Got, Want byte
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("%s message version %d: this rdmamesh reads version %d; run the same rdmamesh version on every node",
		e.Message, e.Got, e.Want)
}

var errMalformed = errors.New("malformed binary message")

type writer []byte

func (w *writer) int(v int)     { *w = binary.AppendVarint(*w, int64(v)) }
func (w *writer) i64(v int64)   { *w = binary.AppendVarint(*w, v) }
func (w *writer) u64(v uint64)  { *w = binary.AppendUvarint(*w, v) }
func (w *writer) str(s string)  { w.u64(uint64(len(s))); *w = append(*w, s...) }
func (w *writer) f64(v float64) { *w = binary.LittleEndian.AppendUint64(*w, math.Float64bits(v)) }

func (w *writer) flag(b bool) {
	v := byte(0)
	if b {
		v = 1
	}
	*w = append(*w, v)
}

func (w *writer) dur(d time.Duration) { w.i64(int64(d)) }

func (w *writer) time(t time.Time) {
	if t.IsZero() {
		w.i64(0)
		return
	}
	w.i64(t.UnixNano())
}

// Lists carry their length plus one, and 0 for nil: JSON tells nil from
// empty ("null" against "[]"), so a record must read back as it was written.
func (w *writer) count(n int, isNil bool) {
	if isNil {
		w.u64(0)
		return
	}
	w.u64(uint64(n) + 1)
}

func putList[E any](w *writer, s []E, put func(*writer, *E)) {
	w.count(len(s), s == nil)
	for i := range s {
		put(w, &s[i])
	}
}

func (w *writer) strs(s []string) { putList(w, s, func(w *writer, v *string) { w.str(*v) }) }
func (w *writer) ints(s []int)    { putList(w, s, func(w *writer, v *int) { w.int(*v) }) }

type reader struct {
	b      []byte
	err    error
	ver    byte // the message's layout version
	shared bool
	tab    *[1 << 16]float64 // the code table, once a message needs it (figs)
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = errMalformed
	}
}

func (r *reader) int() int {
	v, n := binary.Varint(r.b)
	if n <= 0 || v > math.MaxInt32 || v < math.MinInt32 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

func (r *reader) i64() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) u64() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// u32 is a uvarint that must fit 32 bits.
func (r *reader) u32() uint32 {
	v := r.u64()
	if v > math.MaxUint32 {
		r.fail()
	}
	return uint32(v)
}

// u16 is a uvarint that must fit 16 bits.
func (r *reader) u16() uint16 {
	v := r.u64()
	if v > math.MaxUint16 {
		r.fail()
	}
	return uint16(v)
}

func (r *reader) str() string {
	b := r.strBytes()
	if r.shared {
		return intern(b)
	}
	return string(b)
}

// strBytes is a string's bytes, still in the message.
func (r *reader) strBytes() []byte {
	n := r.u64()
	if r.err != nil || n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

func (r *reader) f64() float64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

func (r *reader) byte() byte {
	if len(r.b) < 1 {
		r.fail()
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *reader) flag() bool {
	if len(r.b) < 1 || r.b[0] > 1 {
		r.fail()
		return false
	}
	v := r.b[0] == 1
	r.b = r.b[1:]
	return v
}

func (r *reader) dur() time.Duration { return time.Duration(r.i64()) }

// time is UTC: the coordinator writes its times in UTC, and a decoded
// record must read back (and print) as it was written.
func (r *reader) time() time.Time {
	n := r.i64()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// count reads a list header: the length, and false for nil. Every element
// takes at least a byte, so a count past what is left of the message is
// malformed: a corrupt count cannot make a decoder allocate more than a
// small multiple of its input.
func (r *reader) count() (int, bool) {
	v := r.u64()
	if v == 0 || r.err != nil {
		return 0, false
	}
	if v-1 > uint64(len(r.b)) {
		r.fail()
		return 0, false
	}
	return int(v - 1), true
}

func getList[E any](r *reader, get func(*reader, *E)) []E {
	n, ok := r.count()
	if !ok {
		return nil
	}
	out := make([]E, n)
	for i := range out {
		if r.err != nil {
			return out
		}
		get(r, &out[i])
	}
	return out
}

func (r *reader) strs() []string { return getList(r, func(r *reader, v *string) { *v = r.str() }) }
func (r *reader) ints() []int    { return getList(r, func(r *reader, v *int) { *v = r.int() }) }

func (r *reader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.fail()
	}
	return r.err
}
