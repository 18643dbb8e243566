package scale

import (
	"bytes"
	"net/http"
	"sync"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// nullTask answers a task at once with plausible per-rail figures, without
// running the simulated test: the "control" mode measures the coordinator
// and its raft log alone, as if 1,024 real hosts ran the tests elsewhere.
// Only task calls are answered here; gossip and inventory are the workers'.
// It stands in for remote hosts' work, so it spends as little as it can:
// the task is read and the answer written in pooled buffers.
func nullTask(req *http.Request) (*http.Response, bool) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/tasks" || req.Header.Get("Content-Type") != wire.ContentType {
		return nil, false
	}
	in := wire.GetBuf()
	defer in.Put()
	buf := bytes.NewBuffer(in.B)
	_, err := buf.ReadFrom(req.Body)
	in.B = buf.Bytes()
	if err != nil {
		return nil, false
	}
	sc := nullScratches.Get().(*nullScratch)
	defer nullScratches.Put(sc)
	// The decoder copies what it keeps, so in goes back on return, and the
	// task and its answer live in sc until the answer is encoded.
	t, err := wire.DecodeTaskIn(in.B, sc.task)
	if err != nil {
		return nil, false
	}
	res := nullResult(t, sc)
	out := wire.GetBuf()
	out.B = wire.TaskResultMsg.Append(out.B, &res)
	// Built directly rather than through httptest.ResponseRecorder: the
	// recorder's header cloning was a tenth of this.
	return &http.Response{Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: nullHeader, Body: wire.NewBody(out), ContentLength: int64(len(out.B)), Request: req}, true
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
// task has one (as if the peer had run it). internal/testing/chaos answers
// its large control-mode cluster with it too.
func NullResult(t wire.Task) wire.TaskResult { return nullResult(t, &nullScratch{}) }

// nullScratch is the room one null answer is built in; nullTask reuses it
// from answer to answer, NullResult's answers keep their own.
type nullScratch struct {
	task  []probe.RailPair
	rails []wire.RailResult
	lats  []probe.Latency
}

var nullScratches = sync.Pool{New: func() any {
	return &nullScratch{task: make([]probe.RailPair, 0, 64), rails: make([]wire.RailResult, 0, 64), lats: make([]probe.Latency, 0, 64)}
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
		Rails: nullRails(rails[:len(t.Rails):len(t.Rails)], lats, t.Src, t.Dst, t.Rails, t.Params.LatencyIters)}
	if t.Reverse != nil {
		k := len(t.Rails)
		res.Reverse = &wire.ReverseResult{Rails: nullRails(rails[k:], lats[k:], t.Dst, t.Src, back, t.Params.LatencyIters)}
	}
	return res
}

// nullRails fills out (and lats, which out's figures point into) with
// one ok answer per rail of src → dst.
func nullRails(out []wire.RailResult, lats []probe.Latency, src, dst string, rails []probe.RailPair, iters int) []wire.RailResult {
	h := pairHash(src, dst)
	for i, rp := range rails {
		j := float64(h%97+uint64(rp.Rail)) / 10 // a few ns of spread
		lats[i] = probe.Latency{Samples: iters, MinNs: 990 + j, P50Ns: 1010 + j, P90Ns: 1030 + j, P99Ns: 1100 + j,
			P999Ns: 1300 + j, MaxNs: 2000 + j, StdevNs: 12 + j/10}
		out[i] = wire.RailResult{Rail: rp.Rail, SrcDevice: rp.Src.Device, DstDevice: rp.Dst.Device, Class: probe.ClassOK,
			SrcGID: rp.Src.GIDIndex, DstGID: rp.Dst.GIDIndex, Latency: &lats[i]}
	}
	return out
}
