package wire

import (
	"encoding/binary"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// TaskResultQ is the task result with its figures as the quant codes the
// coordinator's store keeps (quant.go), version 4 of the task result:
// each latency is its sample count and seven 2-byte codes, each bandwidth
// its bytes and three codes. The worker quantises what it measured, so the
// leader, which decodes a million answers a sweep, neither reads floats nor
// quantises them (at 4,096 x 8 that was 11 of its CPU-s), and an 8-rail
// pair's answer is about half the bytes. The figures a leader records are
// the same either way: it kept nothing but these codes before either.
//
// A worker answers in it only on a task stream opened as StreamProto;
// POST /v1/tasks and a stream opened as StreamProtoFloats (a coordinator
// of an earlier version) get TaskResultMsg, version 3.
var TaskResultQ = &Codec[TaskResult]{name: "task result", version: 4, shared: true,
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
	for k := range dst {
		dst[k] = binary.LittleEndian.Uint16(r.b[2*k:])
	}
	r.b = r.b[2*len(dst):]
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
