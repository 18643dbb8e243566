package scale

import (
	"net/http"
	"slices"
	"sync"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/session"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// nullTask answers a task at once with plausible per-rail figures, without
// running the simulated test: the "control" mode measures the coordinator
// and its raft log alone, as if 1,024 real hosts ran the tests elsewhere.
// Only task calls are answered here; gossip and inventory are the workers'.
// It stands in for remote hosts' work, so it spends as little as it can:
// the task is read and the answer written in pooled buffers.
func nullTask(req *http.Request) (*http.Response, bool) {
	out, ok := nullAnswer(req)
	if !ok {
		return nil, false
	}
	// Built directly rather than through httptest.ResponseRecorder: the
	// recorder's header cloning was a tenth of this.
	return &http.Response{Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: nullHeader, Body: wire.NewBody(out), ContentLength: int64(len(out.B)), Request: req}, true
}

// nullAnswer is the stand-in's answer to req, a task; false when req is
// not one, or not one it can read.
func nullAnswer(req *http.Request) (*wire.Buf, bool) {
	// The header map is read as the coordinator writes it (canonical keys):
	// Get would canonicalise the key again on every task.
	if ct := req.Header["Content-Type"]; req.Method != http.MethodPost || req.URL.Path != "/v1/tasks" || len(ct) == 0 || ct[0] != wire.ContentType {
		return nil, false
	}
	n := req.ContentLength
	if n == 0 && req.Body != nil && req.Body != http.NoBody {
		n = -1 // a client request's 0 with a body: not known
	}
	in, err := wire.ReadBuf(req.Body, n, session.MaxBody) // the worker's bound
	if err != nil {
		return nil, false
	}
	defer in.Put()
	out := wire.GetBuf()
	var ok bool
	// A posted task is answered as a worker answers it: in floats.
	if out.B, ok = NullAppend(in.B, out.B, false); !ok {
		out.Put()
		return nil, false
	}
	return out, true
}

// NullAppend appends the stand-in's answer to task (its encoded bytes) to
// out, as wire.ResultCodec(codes) writes it; false when task is not one it
// can read. It is the workers' worker.Options.AnswerTask when the harness
// runs over TCP.
func NullAppend(task, out []byte, codes bool) ([]byte, bool) {
	sc := nullScratches.Get().(*nullScratch)
	defer nullScratches.Put(sc)
	// The task's names point into task (the decoder borrows them) and its
	// rails are the decoder's, so the answer is encoded before the caller
	// reuses task; nothing keeps the task.
	t, err := sc.dec.Decode(task)
	if err != nil {
		sc.enc = nil // the decoder's rails may be this task's, the plan is not
		return out, false
	}
	res, fwd, back := sc.answer(&t, codes)
	return wire.AppendTaskResult(out, &res, fwd, back), true
}

// nullHeader is every null answer's header; readers do not modify it.
var nullHeader = http.Header{"Content-Type": {wire.ContentType}}

// pairHash is FNV-1a over src then dst, without the hash.Hash allocations.
func pairHash(src, dst string) uint64 {
	h := uint64(14695981039346656037)
	for _, s := range [2]string{src, dst} {
		for i := 0; i < len(s); i++ {
			h = (h ^ uint64(s[i])) * 1099511628211
		}
	}
	return h
}

// NullResult is control mode's answer to a task: every rail ok with
// plausible latency figures, at once, for the reverse half too when the
// task has one (as if the peer had run it). rigs/chaos answers
// its large control-mode cluster with it too.
func NullResult(t wire.Task) wire.TaskResult { return nullResult(t, &nullScratch{}) }

// nullScratch is the room one null answer is built in; nullTask reuses it
// from answer to answer, NullResult's answers keep their own.
//
// A stand-in host is asked for the same rails by every pair of the
// simulated fabric, and its answers' figures differ only by the pair's
// spread (pairHash % 97): its task decoder keeps the last rails it
// decoded, and enc the answers' rails already encoded, by half, spread
// and version, for the rails in plan and the iteration count in iters.
type nullScratch struct {
	dec   wire.TaskDecoder
	rails []wire.RailResult
	lats  []probe.Latency
	plan  [2][]probe.RailPair
	iters int
	enc   *encMemo
	rev   wire.ReverseResult
}

// encKey is what an answer's encoded rails differ by.
type encKey struct {
	half, spread uint64
	codes        bool
}

// encMemo is the encoded rails by encKey: arrays, where a map's hashing
// was most of what answering from the memo cost.
type encMemo struct {
	rails [2][2][97]wire.EncodedRails // [codes][half][spread]
	have  [2][2][97]bool
}

func (m *encMemo) at(k encKey) (*wire.EncodedRails, *bool) {
	c := 0
	if k.codes {
		c = 1
	}
	return &m.rails[c][k.half][k.spread], &m.have[c][k.half][k.spread]
}

// answer is nullResult(t) as a head and its halves' rails encoded as
// wire.ResultCodec(codes) writes them.
func (sc *nullScratch) answer(t *wire.Task, codes bool) (wire.TaskResult, wire.EncodedRails, wire.EncodedRails) {
	var back []probe.RailPair
	if t.Reverse != nil {
		back = t.Reverse.Rails
	}
	iters := t.Params.LatencyIters
	// The decoder says when the rails are the last task's, which every
	// answer of this scratch planned for: comparing them was a tenth of
	// the stand-in's CPU.
	if sc.enc == nil || iters != sc.iters || !sc.dec.SameRails() && (!slices.Equal(t.Rails, sc.plan[0]) || !slices.Equal(back, sc.plan[1])) {
		if sc.enc == nil {
			sc.enc = new(encMemo)
		}
		*sc.enc = encMemo{}
		sc.plan[0], sc.plan[1], sc.iters = slices.Clone(t.Rails), slices.Clone(back), iters
	}
	res := wire.TaskResult{SweepID: t.SweepID, Round: t.Round, Src: t.Src, Dst: t.Dst}
	fwd, bk := sc.encoded(encKey{0, pairHash(t.Src, t.Dst) % 97, codes}, t.Rails, iters), wire.EncodedRails{}
	if t.Reverse != nil {
		sc.rev = wire.ReverseResult{}
		res.Reverse = &sc.rev
		bk = sc.encoded(encKey{1, pairHash(t.Dst, t.Src) % 97, codes}, back, iters)
	}
	return res, fwd, bk
}

func (sc *nullScratch) encoded(key encKey, rails []probe.RailPair, iters int) wire.EncodedRails {
	e, have := sc.enc.at(key)
	if *have {
		return *e
	}
	n := len(rails)
	if cap(sc.rails) < n {
		sc.rails, sc.lats = make([]wire.RailResult, 0, n), make([]probe.Latency, 0, n)
	}
	*e, *have = wire.EncodeRailResults(nullRails(sc.rails[:n], sc.lats[:n], key.spread, rails, iters), key.codes), true
	return *e
}

var nullScratches = sync.Pool{New: func() any {
	return &nullScratch{dec: wire.TaskDecoder{Borrow: true}, rails: make([]wire.RailResult, 0, 64), lats: make([]probe.Latency, 0, 64)}
}}

func nullResult(t wire.Task, sc *nullScratch) wire.TaskResult {
	var back []probe.RailPair
	if t.Reverse != nil {
		back = t.Reverse.Rails
	}
	n := len(t.Rails) + len(back)
	if cap(sc.rails) < n {
		sc.rails, sc.lats = make([]wire.RailResult, 0, n), make([]probe.Latency, 0, n)
	}
	rails, lats := sc.rails[:n], sc.lats[:n]
	res := wire.TaskResult{SweepID: t.SweepID, Round: t.Round, Src: t.Src, Dst: t.Dst,
		Rails: nullRails(rails[:len(t.Rails):len(t.Rails)], lats, pairHash(t.Src, t.Dst)%97, t.Rails, t.Params.LatencyIters)}
	if t.Reverse != nil {
		k := len(t.Rails)
		res.Reverse = &wire.ReverseResult{Rails: nullRails(rails[k:], lats[k:], pairHash(t.Dst, t.Src)%97, back, t.Params.LatencyIters)}
	}
	return res
}

// nullRails fills out (and lats, which out's figures point into) with
// one ok answer per rail, the figures of a direction whose spread
// (pairHash of its ends, % 97) is spread.
func nullRails(out []wire.RailResult, lats []probe.Latency, spread uint64, rails []probe.RailPair, iters int) []wire.RailResult {
	for i, rp := range rails {
		lats[i] = nullLatency(spread+uint64(rp.Rail), iters)
		out[i] = wire.RailResult{Rail: rp.Rail, SrcDevice: rp.Src.Device, DstDevice: rp.Dst.Device, Class: probe.ClassOK,
			SrcGID: rp.Src.GIDIndex, DstGID: rp.Dst.GIDIndex, Latency: &lats[i]}
	}
	return out
}

// nullLatency is the figures of spread k (a few ns apart from k to k),
// from a table for the usual spreads: a stand-in host answers a million
// rails a sweep with a few hundred distinct figure sets.
func nullLatency(k uint64, iters int) probe.Latency {
	var l probe.Latency
	if k < uint64(len(nullLats)) {
		l = nullLats[k]
	} else {
		l = spreadLatency(k)
	}
	l.Samples = iters
	return l
}

var nullLats = func() (t [97 + 64]probe.Latency) {
	for k := range t {
		t[k] = spreadLatency(uint64(k))
	}
	return t
}()

func spreadLatency(k uint64) probe.Latency {
	j := float64(k) / 10
	return probe.Latency{MinNs: 990 + j, P50Ns: 1010 + j, P90Ns: 1030 + j, P99Ns: 1100 + j,
		P999Ns: 1300 + j, MaxNs: 2000 + j, StdevNs: 12 + j/10}
}
