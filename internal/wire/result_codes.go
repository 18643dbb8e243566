package wire

import (
	"encoding/binary"
	"math"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// TaskResultQ is the task result with its figures as the quant codes the
// coordinator's store keeps (quant.go), version 6 of the task result
// (version 4 without the rails' flows and back flows):
// each latency is its sample count and seven 2-byte codes, each bandwidth
// its bytes and three codes. The worker quantises what it measured, so the
// leader, which decodes a million answers a sweep, neither reads floats nor
// quantises them (at 4,096 x 8 that would be 11 of its CPU-s), and an
// 8-rail pair's answer is about half the bytes. The figures a leader
// records are the same either way: the store keeps nothing but these codes.
//
// A worker answers in it only on a task stream opened as StreamProto;
// POST /v1/tasks and a stream opened as StreamProtoFloats (a coordinator
// of an earlier version) get TaskResultMsg, version 5.
var TaskResultQ = &Codec[TaskResult]{name: "task result", version: 6, shared: true,
	put: func(w *writer, res *TaskResult) { putTaskResult(w, res, (*writer).railResultQ) },
	get: func(r *reader, res *TaskResult) { getTaskResult(r, res, resultRoom{codes: true}) }}

// ResultCodec is the task result's codec for a stream or a hook that
// answers in codes (TaskResultQ) or in floats (TaskResultMsg).
func ResultCodec(codes bool) *Codec[TaskResult] {
	if codes {
		return TaskResultQ
	}
	return TaskResultMsg
}

func putTaskResult(w *writer, res *TaskResult, put func(*writer, *RailResult)) {
	putResultHead(w, res)
	var back []RailResult
	if res.Reverse != nil {
		back = res.Reverse.Rails
	}
	putHalves(w, res.Rails, back, res.Reverse != nil, false, put)
}

// railResultQ is railResult with the figures as codes.
func (w *writer) railResultQ(rr *RailResult) { w.rail(rr, true) }

// latencyQ writes l's sample count and its figures' codes: q when the
// figures came as codes (a result decoded from this version, passed on),
// else l's own quantised.
func (w *writer) latencyQ(l *probe.Latency, q *LatQ) {
	w.int(l.Samples)
	codes := LatCodes(l)
	if q != nil {
		codes = *q
	}
	w.codes(codes[:])
}

// latencyQ reads what writer.latencyQ wrote: the codes into q, their
// figures into l.
func (r *reader) latencyQ(l *probe.Latency, q *LatQ) {
	samples := r.int()
	r.codes(q[:])
	*l = q.figures(samples, r.figs())
}

// figs is the code table, found once a reader.
func (r *reader) figs() *[1 << 16]float64 {
	if r.tab == nil {
		r.tab = quantTable()
	}
	return r.tab
}

func (w *writer) bandwidthQ(b *probe.Bandwidth) {
	q := BWCodes(b)
	w.i64(q.Bytes)
	w.codes(q.Q[:])
}

func (r *reader) bandwidthQ(b *probe.Bandwidth) {
	var q BWQ
	q.Bytes = r.i64()
	r.codes(q.Q[:])
	*b = q.Bandwidth()
}

// codes writes quant codes, 2 little-endian bytes each.
func (w *writer) codes(cs []uint16) {
	for _, c := range cs {
		*w = binary.LittleEndian.AppendUint16(*w, c)
	}
}

// codes reads len(dst) codes into dst (zeros, and r failed, when the
// message is too short).
func (r *reader) codes(dst []uint16) {
	if len(r.b) < 2*len(dst) {
		clear(dst)
		r.fail()
		return
	}
	r.b = getCodes(dst, r.b)
}

// getCodes reads len(dst) codes from b, which holds them, and returns the
// rest of b.
func getCodes(dst []uint16, b []byte) []byte {
	c := b[:2*len(dst)]
	for k := range dst {
		dst[k] = uint16(c[2*k]) | uint16(c[2*k+1])<<8
	}
	return b[len(c):]
}

// readLatency is a rail's optional read latency, in the answer's form.
func (r *reader) readLatency(codes bool) *probe.Latency {
	if !codes {
		return r.latency()
	}
	if !r.flag() {
		return nil
	}
	l := new(probe.Latency)
	var q LatQ
	r.latencyQ(l, &q)
	return l
}

// plainRailQ reads, for the leader (device names skipped), a rail of a
// TaskResultQ answer in the shape nearly every rail of a sweep has: ok,
// no error, a latency, no bandwidth or read latency, no counters, and
// small numbers (one-byte rail, names and GID indices; any flows). It
// reads it in one pass over local bytes, where the general path's dozen
// calls each moved the reader: a 1,024-node sweep decodes 8 million
// rails. A rail of any other shape is left unread (false) for the general
// path, which reads it to the same values.
func (r *reader) plainRailQ(rr *RailResult, l *probe.Latency, q *LatQ) bool {
	b := r.b
	// rail, then the two device names' lengths and bytes
	if len(b) < 3 || b[0] >= 0x80 || b[1] >= 0x80 {
		return false
	}
	k := 2 + int(b[1])
	if len(b) <= k || b[k] >= 0x80 {
		return false
	}
	k += 1 + int(b[k])
	// "ok", no error, a latency: 2 'o' 'k' 0 1
	if len(b) < k+5 || b[k] != 2 || b[k+1] != 'o' || b[k+2] != 'k' || b[k+3] != 0 || b[k+4] != 1 {
		return false
	}
	k += 5
	samples, n := binary.Varint(b[k:])
	if n <= 0 || n > 4 {
		return false
	}
	k += n
	// the codes, then no bandwidth, no read latency, GID indices, no
	// counters, the flow and the back flow
	if len(b) < k+len(q)*2+5 {
		return false
	}
	t := b[k+len(q)*2:]
	if t[0] != 0 || t[1] != 0 || t[2] >= 0x80 || t[3] >= 0x80 || t[4] != 0 {
		return false
	}
	flow, n := binary.Uvarint(t[5:])
	if n <= 0 || flow > math.MaxUint16 {
		return false
	}
	back, m := binary.Uvarint(t[5+n:])
	if m <= 0 || back > math.MaxUint16 {
		return false
	}
	getCodes(q[:], b[k:])
	*l = q.figures(int(samples), r.figs())
	*rr = RailResult{Rail: unzig(b[0]), Class: probe.ClassOK, Latency: l, LatencyQ: q, SrcGID: unzig(t[2]), DstGID: unzig(t[3]),
		Flow: uint16(flow), BackFlow: uint16(back)}
	r.b = t[5+n+m:]
	return true
}

// unzig is a one-byte zigzag varint's value.
func unzig(v byte) int { return int(v>>1) ^ -int(v&1) }
