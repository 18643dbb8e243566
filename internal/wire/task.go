package wire

import (
	"errors"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/rdmamesh/rdmamesh/internal/counters"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// Task is what the coordinator hands an initiator worker (POST /v1/tasks):
// measure Src → Dst on every listed rail in parallel, and come back before
// Deadline.
type Task struct {
	SweepID  string
	Round    int
	Src      string
	Dst      string
	DstAPI   string // host:port of the target's worker API
	Rails    []probe.RailPair
	Params   probe.TestParams
	Deadline time.Time
	Ticket   string // probe.SignTicket(token, SweepID, Src, Dst, Deadline)
	// SrcAPI is the initiator's own API address, where the reverse run
	// opens its sessions.
	SrcAPI string
	// Reverse, when set, is Dst → Src: the initiator hands it to Dst once
	// Src → Dst is done, so a pair costs the coordinator one task (half the
	// requests of one per direction) and the directions still never share
	// bandwidth.
	Reverse *ReverseTask
}

// ReverseTask is the Dst → Src half of a pair task. It has its own
// deadline and ticket, signed for Dst → Src, as the coordinator would
// have given a task of its own.
type ReverseTask struct {
	Rails    []probe.RailPair
	Deadline time.Time
	Ticket   string
}

// ReverseOf is the task Dst runs for t's reverse half (t.Reverse set).
func ReverseOf(t *Task) Task {
	return Task{SweepID: t.SweepID, Round: t.Round, Src: t.Dst, Dst: t.Src, DstAPI: t.SrcAPI, Rails: t.Reverse.Rails,
		Params: t.Params, Deadline: t.Reverse.Deadline, Ticket: t.Reverse.Ticket}
}

// RailResult is one directional cell (Src → Dst on one rail).
type RailResult struct {
	Rail      int
	SrcDevice string
	DstDevice string
	Class     probe.Class
	Error     *probe.Error
	Latency   *probe.Latency
	Bandwidth *probe.Bandwidth
	// ReadLatency is the RDMA READ round trip when the test asked for it
	// (TestParams.ReadIters) and the fabric can measure it.
	ReadLatency *probe.Latency
	SrcGID      int
	DstGID      int
	// Counts are what the initiator's port counters moved by since the
	// port's previous reading (package counters), read after this rail's
	// test; nil when nothing moved, which is every healthy test.
	Counts []counters.Count
	// LatencyQ is Latency as the quant codes a TaskResultQ answer carried
	// (Latency holds the figures they decode to), so that the leader
	// records them as they came; nil from a TaskResultMsg answer, and on
	// the worker, which quantises its figures when it writes them.
	LatencyQ *LatQ
	// Flow is the initiator QP's RoCE v2 UDP source port (QPInfo.UDPSport,
	// 0 = unknown): among equal-cost paths, the one this test took.
	Flow uint16
	// BackFlow is the responder QP's, as its session open answered it: the
	// path the pongs and acknowledgements took back, which ECMP hashes on
	// its own and so may cross other links than Flow's.
	BackFlow uint16
}

// TaskResult answers a Task.
type TaskResult struct {
	SweepID string
	Round   int
	Src     string
	Dst     string
	Rails   []RailResult
	Elapsed time.Duration
	// Tester is set when the worker's own resources failed while the task
	// ran (selffault): its figures, and its peers', cannot be trusted.
	Tester *probe.Error
	// Reverse answers Task.Reverse: what Dst measured towards Src, or why
	// it could not.
	Reverse *ReverseResult
}

// ReverseResult is the Dst → Src half of a pair task's answer.
type ReverseResult struct {
	Rails   []RailResult
	Elapsed time.Duration
	Tester  *probe.Error
}

// ReverseResultOf is res, Dst's answer to ReverseOf(t), as the reverse
// half of the initiator's answer.
func ReverseResultOf(res *TaskResult) *ReverseResult {
	return &ReverseResult{Rails: res.Rails, Elapsed: res.Elapsed, Tester: res.Tester}
}

// TaskMsg is the task's codec. A 1,024-node sweep sends half a million
// tasks; encoding/json spent about 100 µs of CPU per 8-rail task on
// reflection alone, more than the rest of the round trip. Version 2 added
// SrcAPI and the reverse half, and puts both halves' rail counts before
// their rails so that a decoder allocates them once; its strings (names,
// devices, addresses) are interned, the tickets, unique per task, are not.
// Version 3 writes a reverse half that mirrors the forward one (each rail
// with its ends swapped, as every same-rail sweep's is) as one flag
// instead of its rails: a third of the task's bytes, and of what both ends
// spent encoding and decoding it. Version 4 added each endpoint's flow
// label (probe.Endpoint.FlowLabel), the link sweep's steering.
var TaskMsg = &Codec[Task]{name: "task", version: 4, shared: true,
	put: func(w *writer, t *Task) { putTask(w, t, nil) },
	get: func(r *reader, t *Task) { getTask(r, t, &railMemo{}) }}

// putTask writes t, its rails section (the mirror flag, the counts and
// the rails) from e when e last wrote one for the same rails.
func putTask(w *writer, t *Task, e *TaskEncoder) {
	w.str(t.SweepID)
	w.int(t.Round)
	w.str(t.Src)
	w.str(t.Dst)
	w.str(t.DstAPI)
	w.str(t.SrcAPI)
	w.params(&t.Params)
	w.time(t.Deadline)
	w.str(t.Ticket)
	var back []probe.RailPair
	w.flag(t.Reverse != nil)
	if t.Reverse != nil {
		w.time(t.Reverse.Deadline)
		w.str(t.Reverse.Ticket)
		back = t.Reverse.Rails
	}
	if e != nil && e.same(t.Rails, back, t.Reverse != nil) {
		*w = append(*w, e.sect...)
		return
	}
	start := len(*w)
	mirror := false
	if t.Reverse != nil {
		mirror = mirrors(t.Rails, back)
		w.flag(mirror)
	}
	putHalves(w, t.Rails, back, t.Reverse != nil, mirror, (*writer).railPair)
	if e != nil {
		e.keep(t.Rails, back, t.Reverse != nil, (*w)[start:])
	}
}

// TaskEncoder writes tasks one after another for a coordinator goroutine
// that sends many: every pair of a fabric whose nodes have the same HCAs
// is asked for the same rails, so their section is encoded once and then
// only compared. It is not safe for concurrent use.
type TaskEncoder struct {
	fwd, back       []probe.RailPair
	fwdNil, backNil bool
	present         bool
	sect            []byte // the section last written; never empty once written
	// w is the message being written: putTask's pointer to a local one
	// escaped (it is passed on through function values), one allocation
	// a task.
	w writer
}

// Append is TaskMsg.Append.
func (e *TaskEncoder) Append(b []byte, t *Task) []byte {
	e.w = writer(append(b, TaskMsg.version))
	putTask(&e.w, t, e)
	w := e.w
	e.w = nil
	return w
}

func (e *TaskEncoder) same(fwd, back []probe.RailPair, present bool) bool {
	return len(e.sect) > 0 && present == e.present && (fwd == nil) == e.fwdNil && (back == nil) == e.backNil &&
		slices.Equal(fwd, e.fwd) && slices.Equal(back, e.back)
}

func (e *TaskEncoder) keep(fwd, back []probe.RailPair, present bool, sect []byte) {
	e.fwd, e.back = append(e.fwd[:0], fwd...), append(e.back[:0], back...)
	e.fwdNil, e.backNil, e.present = fwd == nil, back == nil, present
	e.sect = append(e.sect[:0], sect...)
}

// reading starts decoding b as a c message, for a decoder that reads it
// with a function of its own instead of c's (which, called through a
// function value, would put every decoded value on the heap): the reader
// past the version byte. end finishes it.
func reading[T any](c *Codec[T], b []byte) (reader, error) {
	if err := checkVersion(c.name, c.version, b); err != nil {
		return reader{}, err
	}
	return reader{b: b[1:], shared: c.shared}, nil
}

// end is the error of a c message read with r: every byte must be used.
func end[T any](r *reader, c *Codec[T]) error {
	if err := r.done(); err != nil {
		return fmt.Errorf("%s message: %w", c.name, err)
	}
	return nil
}

func getTask(r *reader, t *Task, m *railMemo) {
	*t = Task{SweepID: m.name(r), Round: r.int(), Src: m.name(r), Dst: m.name(r), DstAPI: m.name(r), SrcAPI: m.name(r)}
	t.Params, t.Deadline, t.Ticket = r.params(), r.time(), m.ticket(r)
	mirror := false
	if r.flag() {
		t.Reverse = m.reverse()
		*t.Reverse = ReverseTask{Deadline: r.time(), Ticket: m.ticket(r)}
		mirror = r.flag()
	}
	h := r.halves(t.Reverse != nil)
	if mirror && h.n != 2*h.nf {
		r.fail() // a mirrored half has the forward half's length
	}
	all := m.get(r, h, mirror)
	if r.err != nil {
		return
	}
	var back []probe.RailPair
	t.Rails, back = split(h, all)
	if t.Reverse != nil {
		t.Reverse.Rails = back
	}
}

// railMemo is where a task's rails are decoded, and, for a TaskDecoder,
// the section they were decoded from: the next task whose rails section
// has the same bytes takes them as they are. The encoding is
// self-delimiting, so equal bytes at the same place decode to equal rails
// and end at the same byte.
type railMemo struct {
	rails  []probe.RailPair // both halves, the reverse rebuilt when mirrored
	keep   bool             // remember sect for the next task
	sect   []byte           // the bytes rails came from; empty: nothing kept
	h      halfCounts
	mirror bool
	rev    ReverseTask // a TaskDecoder's task's reverse half
	borrow bool        // TaskDecoder.Borrow
	hit    bool        // the last task's rails were the kept ones
}

// name reads one of a task's names (sweep, nodes, API addresses): a
// borrowing decoder's point into the message instead of being interned.
func (m *railMemo) name(r *reader) string {
	if !m.borrow {
		return r.str()
	}
	b := r.strBytes()
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// ticket is a ticket, borrowed as the names are, else its own string.
func (m *railMemo) ticket(r *reader) string {
	if m.borrow {
		return m.name(r)
	}
	return r.ownStr()
}

// reverse is where a task's reverse half goes: a TaskDecoder's own, which
// the task has until the next Decode, or a new one.
func (m *railMemo) reverse() *ReverseTask {
	if m.keep {
		return &m.rev
	}
	return new(ReverseTask)
}

func (m *railMemo) get(r *reader, h halfCounts, mirror bool) []probe.RailPair {
	m.hit = len(m.sect) > 0 && h == m.h && mirror == m.mirror && len(r.b) >= len(m.sect) && string(r.b[:len(m.sect)]) == string(m.sect)
	if m.hit {
		r.b = r.b[len(m.sect):]
		return m.rails
	}
	m.sect = m.sect[:0] // rails is about to be overwritten
	sent := h.n
	if mirror {
		sent = h.nf
	}
	start := r.b
	// Read here rather than through a helper taking the element reader as
	// a function value, which would put the reader on the heap (see
	// reader.error); like count, it refuses more elements than bytes left.
	if sent > len(r.b) {
		r.fail()
		return nil
	}
	all := room(m.rails, h.n)
	for i := range sent {
		if r.err != nil {
			break
		}
		r.railPair(&all[i])
	}
	if r.err != nil {
		return nil
	}
	all = all[:h.n]
	for i := sent; i < h.n; i++ {
		all[i] = mirrored(all[i-h.nf])
	}
	if m.keep {
		m.rails, m.h, m.mirror = all, h, mirror
		m.sect = append(m.sect[:0], start[:len(start)-len(r.b)]...)
	}
	return all
}

// TaskDecoder decodes tasks one after another for a host that answers
// many of them: every pair of a fabric whose nodes have the same HCAs
// asks for the same rails, so their section is decoded once and then
// only compared, byte for byte. A decoded task's rails belong to the
// decoder until the next Decode; it is not safe for concurrent use.
type TaskDecoder struct {
	// Borrow makes a decoded task's sweep, node and API address strings
	// and its tickets point into the bytes it was decoded from, valid only
	// while those bytes are: for a host that answers from the task and
	// drops it before its buffer is reused (the scale harness's stand-in,
	// at 4,096 nodes 12 CPU-s of interning five names a task, and two
	// tickets copied). Everything else the task holds is its own, or the
	// decoder's, as without it.
	Borrow bool
	m      railMemo
}

// Decode is TaskMsg.Decode, with the decoder's rails and reverse half.
func (d *TaskDecoder) Decode(b []byte) (Task, error) {
	d.m.keep, d.m.borrow, d.m.hit = true, d.Borrow, false
	var t Task
	r, err := reading(TaskMsg, b)
	if err == nil {
		getTask(&r, &t, &d.m)
		err = end(&r, TaskMsg)
	}
	return t, err
}

// SameRails says whether the last Decode's task has the rails of the task
// decoded before it: its rails section had the same bytes, so a host can
// keep what it built for them. False after a Decode that failed before
// its rails.
func (d *TaskDecoder) SameRails() bool { return d.m.hit }

// mirrored is p seen from its other end.
func mirrored(p probe.RailPair) probe.RailPair {
	return probe.RailPair{Rail: p.Rail, Src: p.Dst, Dst: p.Src}
}

// mirrors says whether back is fwd seen from the other end, rail by rail.
func mirrors(fwd, back []probe.RailPair) bool {
	if len(fwd) != len(back) {
		return false
	}
	for i := range fwd {
		if back[i] != mirrored(fwd[i]) {
			return false
		}
	}
	return true
}

// room is n zero elements: scratch's when it has room (and is not nil, so
// that an empty list decodes as Decode gives it), else new ones.
func room[E any](scratch []E, n int) []E {
	if scratch == nil || cap(scratch) < n {
		return make([]E, n)
	}
	out := scratch[:n]
	clear(out)
	return out
}

// ownStr is a string never interned: one unique to its message (a
// ticket) would only push a repeated one out of the table.
func (r *reader) ownStr() string {
	shared := r.shared
	r.shared = false
	s := r.str()
	r.shared = shared
	return s
}

// putHalves writes a message's forward list and, when it has a reverse
// half (present), that half's list, both counts first: a decoder then
// reads both into one allocation (reader.halves, split). A reverse half
// the reader rebuilds from the forward one (mirrored) has its count
// written and its elements left out.
func putHalves[E any](w *writer, fwd, back []E, present, mirrored bool, put func(*writer, *E)) {
	if present {
		w.count(len(back), back == nil)
	}
	putList(w, fwd, put)
	if mirrored {
		return
	}
	for i := range back {
		put(w, &back[i])
	}
}

// halfCounts is what putHalves wrote before the elements: n of them in
// all, the first nf forward; ok* false for a list written nil.
type halfCounts struct {
	n, nf    int
	okf, okb bool
}

func (r *reader) halves(present bool) halfCounts {
	var h halfCounts
	nb := 0
	if present {
		nb, h.okb = r.count()
	}
	h.nf, h.okf = r.count()
	h.n = h.nf + nb
	return h
}

// split cuts the n elements read after h into the two halves.
func split[E any](h halfCounts, all []E) (fwd, back []E) {
	if h.okf {
		fwd = all[:h.nf:h.nf]
	}
	if h.okb {
		back = all[h.nf:]
	}
	return fwd, back
}

// TaskResultMsg is the task result's codec. The leader decodes half a
// million of them a sweep: strings are interned, and both halves' rails,
// and their latency figures, share one allocation each (version 2, which
// added the reverse half, puts the rail counts before the rails for it;
// version 3 added each rail's counter counts, version 5 its flow and back
// flow after them). TaskResultQ, version 6 (4 before flows), carries the
// figures as codes instead.
var TaskResultMsg = &Codec[TaskResult]{name: "task result", version: 5, shared: true,
	put: func(w *writer, res *TaskResult) { putTaskResult(w, res, (*writer).railResult) },
	get: func(r *reader, res *TaskResult) { getTaskResult(r, res, resultRoom{}) }}

// putResultHead writes what a task result has before its rails.
func putResultHead(w *writer, res *TaskResult) {
	w.str(res.SweepID)
	w.int(res.Round)
	w.str(res.Src)
	w.str(res.Dst)
	w.dur(res.Elapsed)
	w.error(res.Tester)
	w.flag(res.Reverse != nil)
	if res.Reverse != nil {
		w.dur(res.Reverse.Elapsed)
		w.error(res.Reverse.Tester)
	}
}

// AnswerRoom is what DecodeAnswer needs besides the bytes: the task the
// answer is to, and where to decode it. Rails, Lats, Codes (a TaskResultQ
// answer's latency codes, in step with Lats; LatQ's layout, for rooms of
// packages that do not import wire) and Reverse are used when they have
// room, else allocated.
type AnswerRoom struct {
	Task    *Task
	Rails   []RailResult
	Lats    []probe.Latency
	Codes   [][7]uint16
	Reverse *ReverseResult
}

// ErrOtherTask is an answer naming another sweep, round or pair than the
// task it answers.
var ErrOtherTask = errors.New("an answer to another task (its sweep, round or pair is not the task's)")

// DecodeAnswer is TaskResultMsg.Decode of the answer to room.Task, for the
// leader: it reuses a scratch per dispatching goroutine for the rails and
// the reverse half, as the cells it makes keep the figures, never the
// rails, and hands in its round's room for the figures. Bandwidth and
// error values are allocated as Decode does. What the leader knows from
// its task is compared, not decoded: the answer's sweep, round and pair
// must be the task's (ErrOtherTask) and come back as the task's own
// strings, and the rails' device names are skipped, left empty (the leader
// names a cell's devices from the rail it asked for). Those names were
// most of the strings an answer made it decode and intern.
//
// It reads both versions, TaskResultQ's and TaskResultMsg's: a worker of
// an earlier version answers in floats.
func DecodeAnswer(b []byte, room AnswerRoom) (TaskResult, error) {
	var res TaskResult
	c := TaskResultQ
	if len(b) > 0 && b[0] == TaskResultMsg.version {
		c = TaskResultMsg
	}
	r, err := reading(c, b)
	if err == nil {
		getTaskResult(&r, &res, resultRoom{rails: room.Rails, lats: room.Lats, codes: c == TaskResultQ, qs: room.Codes,
			rev: room.Reverse, task: room.Task})
		err = end(&r, c)
	}
	return res, err
}

// resultRoom is where a task result's rails, figures and reverse half
// may be decoded, and the task it answers (nil: decode everything);
// codes: the answer is a TaskResultQ, whose latency codes go to qs.
type resultRoom struct {
	rails []RailResult
	lats  []probe.Latency
	codes bool
	qs    [][7]uint16
	rev   *ReverseResult
	task  *Task
}

func getTaskResult(r *reader, res *TaskResult, in resultRoom) {
	if t := in.task; t != nil {
		same := string(r.strBytes()) == t.SweepID
		same = r.int() == t.Round && same
		same = string(r.strBytes()) == t.Src && same
		same = string(r.strBytes()) == t.Dst && same
		if !same && r.err == nil {
			r.err = ErrOtherTask
		}
		*res = TaskResult{SweepID: t.SweepID, Round: t.Round, Src: t.Src, Dst: t.Dst, Elapsed: r.dur(), Tester: r.error()}
	} else {
		*res = TaskResult{SweepID: r.str(), Round: r.int(), Src: r.str(), Dst: r.str(), Elapsed: r.dur(), Tester: r.error()}
	}
	if r.flag() {
		res.Reverse = in.rev
		if res.Reverse == nil {
			res.Reverse = new(ReverseResult)
		}
		*res.Reverse = ReverseResult{Elapsed: r.dur(), Tester: r.error()}
	}
	h := r.halves(res.Reverse != nil)
	if all := getRailResults(r, h.n, in); r.err == nil {
		var back []RailResult
		res.Rails, back = split(h, all)
		if res.Reverse != nil {
			res.Reverse.Rails = back
		}
	}
}

func (w *writer) railResult(rr *RailResult) { w.rail(rr, false) }

// rail writes a rail result, its figures as codes (TaskResultQ) or floats.
func (w *writer) rail(rr *RailResult, codes bool) {
	w.int(rr.Rail)
	w.str(rr.SrcDevice)
	w.str(rr.DstDevice)
	w.str(string(rr.Class))
	w.error(rr.Error)
	if !codes {
		w.latency(rr.Latency)
		w.bandwidth(rr.Bandwidth)
		w.latency(rr.ReadLatency)
	} else {
		w.flag(rr.Latency != nil)
		if rr.Latency != nil {
			w.latencyQ(rr.Latency, rr.LatencyQ)
		}
		w.flag(rr.Bandwidth != nil)
		if rr.Bandwidth != nil {
			w.bandwidthQ(rr.Bandwidth)
		}
		w.flag(rr.ReadLatency != nil)
		if rr.ReadLatency != nil {
			w.latencyQ(rr.ReadLatency, nil)
		}
	}
	w.int(rr.SrcGID)
	w.int(rr.DstGID)
	w.counts(rr.Counts)
	w.u64(uint64(rr.Flow))
	w.u64(uint64(rr.BackFlow))
}

// getRailResults reads n rail results (into scratch when it has room),
// their latency figures in one allocation (or lats, when it has room) and
// their bandwidth figures, if any, in another.
func getRailResults(r *reader, n int, in resultRoom) []RailResult {
	if r.err != nil || n > len(r.b) {
		r.fail()
		return nil
	}
	rails := room(in.rails, n)
	lats := room(in.lats, n)
	var qs [][7]uint16
	if in.codes {
		qs = room(in.qs, n)
	}
	var bws []probe.Bandwidth // quick sweeps measure no bandwidth
	for i := range rails {
		if r.err != nil {
			break
		}
		rr := &rails[i]
		if in.codes && in.task != nil && r.plainRailQ(rr, &lats[i], (*LatQ)(&qs[i])) {
			continue
		}
		rr.Rail = r.int()
		if in.task != nil {
			r.strBytes()
			r.strBytes()
		} else {
			rr.SrcDevice, rr.DstDevice = r.str(), r.str()
		}
		rr.Class = r.class()
		rr.Error = r.error()
		if r.flag() {
			if in.codes {
				rr.LatencyQ = (*LatQ)(&qs[i])
				r.latencyQ(&lats[i], rr.LatencyQ)
			} else {
				r.latencyFields(&lats[i])
			}
			rr.Latency = &lats[i]
		}
		if r.flag() {
			if bws == nil {
				bws = make([]probe.Bandwidth, n)
			}
			if in.codes {
				r.bandwidthQ(&bws[i])
			} else {
				r.bandwidthFields(&bws[i])
			}
			rr.Bandwidth = &bws[i]
		}
		rr.ReadLatency = r.readLatency(in.codes)
		rr.SrcGID, rr.DstGID = r.int(), r.int()
		rr.Counts = r.counts() // nil unless present: scratch rails are reused
		rr.Flow, rr.BackFlow = r.u16(), r.u16()
	}
	return rails
}

// class is a rail's class: "ok", nearly every rail of every answer, is
// taken without a lookup in the intern table.
func (r *reader) class() probe.Class {
	b := r.strBytes()
	if string(b) == string(probe.ClassOK) {
		return probe.ClassOK
	}
	if r.shared {
		return probe.Class(intern(b))
	}
	return probe.Class(b)
}
