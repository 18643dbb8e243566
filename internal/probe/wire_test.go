package probe

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

func randStr(rng *rand.Rand) string { return fmt.Sprintf("s%d-ü", rng.IntN(1000)) }

func randErr(rng *rand.Rand) *Error {
	if rng.IntN(2) == 0 {
		return nil
	}
	return &Error{Class: ClassRetryExceeded, Verb: randStr(rng), Errno: rng.IntN(200) - 100, WCStatus: 12, Cause: randStr(rng), Fix: randStr(rng)}
}

func randEndpoint(rng *rand.Rand) Endpoint {
	return Endpoint{Device: randStr(rng), Port: rng.IntN(3), GIDIndex: rng.IntN(300) - 1, Rail: rng.IntN(8)}
}

func randQP(rng *rand.Rand) QPInfo {
	return QPInfo{Node: randStr(rng), Device: randStr(rng), Port: 1, LinkLayer: "Ethernet", QPN: rng.Uint32(), PSN: rng.Uint32() & 0xffffff,
		LID: uint16(rng.Uint32()), GID: "fe80::1", GIDIndex: 3, GIDType: "RoCE v2", MTU: 4096, RKey: rng.Uint32(), Addr: rng.Uint64(), Size: 65536,
		Netdev: randStr(rng), NetdevMTU: 9000, CMAddr: "10.0.0.1:7471"}
}

func randParams(rng *rand.Rand) TestParams {
	p := DefaultTestParams()
	p.LatencyIters, p.Timeout, p.Connect = rng.IntN(5000), time.Duration(rng.Int64N(1e12)), ConnectRDMACM
	p.ReadIters = rng.IntN(3) * 100
	return p
}

func TestWireRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 50 {
		deadline := time.Unix(0, rng.Int64N(1<<62))
		if rng.IntN(4) == 0 {
			deadline = time.Time{}
		}
		task := Task{Version: Version, SweepID: randStr(rng), Round: rng.IntN(2000), Src: randStr(rng), Dst: randStr(rng),
			DstAPI: "10.0.0.1:7947", Params: randParams(rng), Deadline: deadline, Ticket: randStr(rng)}
		res := TaskResult{Version: Version, SweepID: task.SweepID, Round: 3, Src: "a", Dst: "b", Elapsed: time.Duration(rng.Int64N(1e9))}
		if rng.IntN(3) == 0 {
			res.Tester = &Error{Class: ClassTester, Cause: randStr(rng), Fix: randStr(rng)}
		}
		req := SessionBatchRequest{Version: Version, SweepID: randStr(rng), Src: "a", Dst: "b", Deadline: deadline, Ticket: "t", Params: randParams(rng)}
		rep := SessionBatchReply{Version: Version}
		for r := range rng.IntN(9) {
			task.Rails = append(task.Rails, RailPair{Rail: r, Src: randEndpoint(rng), Dst: randEndpoint(rng)})
			rr := RailResult{Rail: r, SrcDevice: randStr(rng), DstDevice: randStr(rng), Class: ClassOK, Error: randErr(rng),
				SrcGID: rng.IntN(9), DstGID: -1}
			if rng.IntN(3) > 0 {
				rr.Latency = &Latency{Samples: rng.IntN(1e6), MinNs: rng.Float64(), P50Ns: rng.NormFloat64(), P90Ns: 1e9, P99Ns: 0,
					P999Ns: rng.ExpFloat64(), MaxNs: 3, StdevNs: rng.Float64()}
			}
			if rng.IntN(2) > 0 {
				rr.ReadLatency = &Latency{Samples: 100, MinNs: rng.Float64(), P50Ns: 2e3, P99Ns: rng.ExpFloat64(), MaxNs: 9}
			}
			if rng.IntN(2) > 0 {
				rr.Bandwidth = &Bandwidth{Gbps: rng.Float64() * 400, MsgRate: 7e5, Bytes: rng.Int64() - rng.Int64(), Duration: rng.Float64()}
			}
			res.Rails = append(res.Rails, rr)
			req.Rails = append(req.Rails, SessionRail{Rail: r, Local: randEndpoint(rng), Initiator: randQP(rng)})
			rep.Rails = append(rep.Rails, SessionRailOpen{Rail: r, SessionID: randStr(rng), Responder: randQP(rng), Error: randErr(rng)})
		}
		gotTask, err := DecodeTask(AppendTask(nil, task))
		check(t, "task", err, gotTask, task)
		gotRes, err := DecodeTaskResult(AppendTaskResult(nil, res))
		check(t, "task result", err, gotRes, res)
		gotReq, err := DecodeSessionBatch(AppendSessionBatch(nil, req))
		check(t, "session batch", err, gotReq, req)
		gotRep, err := DecodeSessionBatchReply(AppendSessionBatchReply(nil, rep))
		check(t, "session batch reply", err, gotRep, rep)
	}
}

func check(t *testing.T, what string, err error, got, want any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

func TestWireRejects(t *testing.T) {
	good := AppendTask(nil, Task{Version: Version, Rails: []RailPair{{Rail: 1}}})
	for name, b := range map[string][]byte{
		"empty":     nil,
		"json":      []byte(`{"version":1}`),
		"kind":      AppendTaskResult(nil, TaskResult{}),
		"version":   append([]byte{'R', wireVersion + 1}, good[2:]...),
		"truncated": good[:len(good)-1],
		"trailing":  append(append([]byte(nil), good...), 0),
	} {
		if _, err := DecodeTask(b); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
}

// FuzzWireDecode: no input may panic a decoder or make it allocate without
// bound.
func FuzzWireDecode(f *testing.F) {
	f.Add(AppendTask(nil, Task{Version: Version, Rails: []RailPair{{Rail: 1}}}))
	f.Add(AppendTaskResult(nil, TaskResult{Rails: []RailResult{{Latency: &Latency{}, Error: &Error{}}}}))
	f.Add(AppendSessionBatch(nil, SessionBatchRequest{Rails: []SessionRail{{}}}))
	f.Add(AppendSessionBatchReply(nil, SessionBatchReply{Rails: []SessionRailOpen{{}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeTask(b)
		_, _ = DecodeTaskResult(b)
		_, _ = DecodeSessionBatch(b)
		_, _ = DecodeSessionBatchReply(b)
	})
}
