package wire

import (
	"time"

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
// SrcAPI and the reverse half.
var TaskMsg = &Codec[Task]{name: "task", version: 2,
	put: func(w *writer, t *Task) {
		w.str(t.SweepID)
		w.int(t.Round)
		w.str(t.Src)
		w.str(t.Dst)
		w.str(t.DstAPI)
		putList(w, t.Rails, (*writer).railPair)
		w.params(&t.Params)
		w.time(t.Deadline)
		w.str(t.Ticket)
		w.str(t.SrcAPI)
		putOpt(w, t.Reverse, func(w *writer, rv *ReverseTask) {
			putList(w, rv.Rails, (*writer).railPair)
			w.time(rv.Deadline)
			w.str(rv.Ticket)
		})
	},
	get: func(r *reader, t *Task) {
		*t = Task{SweepID: r.str(), Round: r.int(), Src: r.str(), Dst: r.str(), DstAPI: r.str()}
		t.Rails = getList(r, (*reader).railPair)
		t.Params, t.Deadline, t.Ticket, t.SrcAPI = r.params(), r.time(), r.str(), r.str()
		t.Reverse = getOpt(r, func(r *reader, rv *ReverseTask) {
			rv.Rails = getList(r, (*reader).railPair)
			rv.Deadline, rv.Ticket = r.time(), r.str()
		})
	}}

// TaskResultMsg is the task result's codec. The leader decodes half a
// million of them a sweep: strings are interned, and the rails' figures
// share one allocation each. Version 2 added the reverse half.
var TaskResultMsg = &Codec[TaskResult]{name: "task result", version: 2, shared: true,
	put: func(w *writer, res *TaskResult) {
		w.str(res.SweepID)
		w.int(res.Round)
		w.str(res.Src)
		w.str(res.Dst)
		putList(w, res.Rails, (*writer).railResult)
		w.dur(res.Elapsed)
		w.error(res.Tester)
		putOpt(w, res.Reverse, func(w *writer, rv *ReverseResult) {
			putList(w, rv.Rails, (*writer).railResult)
			w.dur(rv.Elapsed)
			w.error(rv.Tester)
		})
	},
	get: func(r *reader, res *TaskResult) {
		*res = TaskResult{SweepID: r.str(), Round: r.int(), Src: r.str(), Dst: r.str()}
		res.Rails = getRailResults(r)
		res.Elapsed, res.Tester = r.dur(), r.error()
		if r.flag() {
			res.Reverse = &ReverseResult{Rails: getRailResults(r)}
			res.Reverse.Elapsed, res.Reverse.Tester = r.dur(), r.error()
		}
	}}

func (w *writer) railResult(rr *RailResult) {
	w.int(rr.Rail)
	w.str(rr.SrcDevice)
	w.str(rr.DstDevice)
	w.str(string(rr.Class))
	w.error(rr.Error)
	w.latency(rr.Latency)
	w.bandwidth(rr.Bandwidth)
	w.latency(rr.ReadLatency)
	w.int(rr.SrcGID)
	w.int(rr.DstGID)
}

func getRailResults(r *reader) []RailResult {
	n, ok := r.count()
	if !ok {
		return nil
	}
	rails := make([]RailResult, n)
	lats := make([]probe.Latency, n)
	var bws []probe.Bandwidth // quick sweeps measure no bandwidth
	for i := range rails {
		if r.err != nil {
			break
		}
		rr := &rails[i]
		rr.Rail, rr.SrcDevice, rr.DstDevice, rr.Class = r.int(), r.str(), r.str(), probe.Class(r.str())
		rr.Error = r.error()
		if r.flag() {
			r.latencyFields(&lats[i])
			rr.Latency = &lats[i]
		}
		if r.flag() {
			if bws == nil {
				bws = make([]probe.Bandwidth, n)
			}
			r.bandwidthFields(&bws[i])
			rr.Bandwidth = &bws[i]
		}
		rr.ReadLatency = r.latency()
		rr.SrcGID, rr.DstGID = r.int(), r.int()
	}
	return rails
}
