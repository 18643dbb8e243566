package coordinator

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// fakeWorker answers tasks; status non-zero answers that status with an
// error reply; with a token, a task without it is refused (401). other
// answers for another round than the task's; codes answers in codes
// (wire.TaskResultQ), tester as a worker short of its own resources.
type fakeWorker struct {
	status int
	token  string
	other  bool
	codes  bool
	tester bool
}

func (f fakeWorker) RoundTrip(req *http.Request) (*http.Response, error) {
	raw, _ := io.ReadAll(req.Body)
	req.Body.Close()
	answer := func(status int, ctype string, b []byte) (*http.Response, error) {
		return &http.Response{StatusCode: status, Status: http.StatusText(status), Request: req, ContentLength: int64(len(b)),
			Header: http.Header{"Content-Type": {ctype}}, Body: io.NopCloser(strings.NewReader(string(b)))}, nil
	}
	t, err := wire.TaskMsg.Decode(raw)
	if err != nil || req.Header.Get("Content-Type") != wire.ContentType {
		return answer(http.StatusTeapot, "text/plain", []byte(fmt.Sprint(err)))
	}
	if f.token != "" && req.Header.Get("Authorization") != "Bearer "+f.token {
		return answer(http.StatusUnauthorized, wire.ContentType, wire.ErrorMsg.Append(nil, &probe.Error{Class: probe.ClassInternal, Cause: "no token"}))
	}
	if f.status != 0 {
		return answer(f.status, wire.ContentType, wire.ErrorMsg.Append(nil, &probe.Error{Class: probe.ClassResource, Cause: "busy with " + t.Src}))
	}
	res := wire.TaskResult{SweepID: t.SweepID, Round: t.Round, Src: t.Src, Dst: t.Dst}
	if f.other {
		res.Round++
	}
	for _, rp := range t.Rails {
		res.Rails = append(res.Rails, wire.RailResult{Rail: rp.Rail, SrcDevice: rp.Src.Device, Class: probe.ClassOK,
			Latency: &probe.Latency{Samples: 1, P50Ns: float64(1000 + rp.Rail), P99Ns: 1234.5678}})
	}
	if f.tester {
		res.Tester = &probe.Error{Class: probe.ClassTester, Cause: "too many open files"}
	}
	return answer(http.StatusOK, wire.ContentType, wire.ResultCodec(f.codes).Append(nil, &res))
}

// A worker's codes reach the cells (matrix.Cell.LatencyCodes), in the
// room the engine hands the phase, with the figures they decode to; an
// answer in floats, or one whose worker ran short of its own resources,
// leaves them unset.
func TestPhaseKeepsTheWorkersCodes(t *testing.T) {
	rails := []probe.RailPair{{Rail: 0, Src: probe.Endpoint{Device: "mlx5_0"}}, {Rail: 1, Src: probe.Endpoint{Device: "mlx5_1"}}}
	for _, fw := range []fakeWorker{{codes: true}, {}, {codes: true, tester: true}} {
		c := &Coordinator{log: slog.New(slog.DiscardHandler), reg: newRegistry(), inflight: newInflight(),
			client: &http.Client{Transport: fw}}
		c.reg.nodes["a"] = &regNode{NodeInfo: api.NodeInfo{Name: "a", State: "alive", APIAddr: "a:1"}}
		c.reg.nodes["b"] = &regNode{NodeInfo: api.NodeInfo{Name: "b", State: "alive", APIAddr: "b:1"}}
		figs, codes := make([]probe.Latency, 2), make([][7]uint16, 2)
		cells := workerDispatch{c}.Phase(context.Background(), nil, sweep.Task{SweepID: "s", Round: 1, Spec: &sweep.Spec{PairTimeout: time.Minute},
			Src: matrix.Node{Name: "a"}, Dst: matrix.Node{Name: "b"}, Rails: rails, Figures: figs, Codes: codes})
		if len(cells) != 2 {
			t.Fatalf("%+v: cells %+v", fw, cells)
		}
		for i, cell := range cells {
			switch {
			case fw.tester:
				if cell.Class != probe.ClassTester || cell.Latency != nil || cell.LatencyCodes != nil {
					t.Fatalf("%+v: cell %d %+v", fw, i, cell)
				}
			case !fw.codes:
				if cell.LatencyCodes != nil || cell.Latency != &figs[i] || cell.Latency.P99Ns != 1234.5678 {
					t.Fatalf("%+v: cell %d %+v", fw, i, cell)
				}
			default:
				want := wire.LatCodes(&probe.Latency{P50Ns: float64(1000 + i), P99Ns: 1234.5678})
				if cell.LatencyCodes != &codes[i] || cell.Latency != &figs[i] || *cell.LatencyCodes != want ||
					cell.Latency.P99Ns != wire.Unquant(want[3]) || cell.Latency.Samples != 1 {
					t.Fatalf("%+v: cell %d %+v, codes %v, want %v", fw, i, cell, cell.LatencyCodes, want)
				}
			}
		}
	}
}

func TestPostTask(t *testing.T) {
	task := wire.Task{SweepID: "s", Round: 7, Src: "a", Dst: "b",
		Rails: []probe.RailPair{{Rail: 0, Src: probe.Endpoint{Device: "mlx5_0"}}, {Rail: 1, Src: probe.Endpoint{Device: "mlx5_1"}}}}
	for _, tc := range []struct {
		name      string
		w         fakeWorker
		wantClass probe.Class
	}{
		{"result", fakeWorker{}, ""},
		{"with a token", fakeWorker{token: "tok"}, ""},
		{"error reply", fakeWorker{status: http.StatusServiceUnavailable}, probe.ClassResource},
		{"an answer to another round", fakeWorker{other: true}, probe.ClassInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Coordinator{client: &http.Client{Transport: tc.w}, opts: Options{Token: tc.w.token}, inflight: newInflight()}
			// Twice: the second call reuses the pooled buffers of the first.
			for range 2 {
				res, perr := c.postTask(context.Background(), "a:1", time.Minute, task)
				switch {
				case tc.w.other:
					if perr == nil || perr.Class != tc.wantClass || !strings.Contains(perr.Cause, "an answer to another task") {
						t.Fatalf("error %+v, want class %s naming the other task", perr, tc.wantClass)
					}
				case tc.wantClass != "":
					if perr == nil || perr.Class != tc.wantClass || perr.Cause != "busy with a" {
						t.Fatalf("error %+v, want class %s", perr, tc.wantClass)
					}
				case perr != nil:
					t.Fatalf("error %+v", perr)
				case len(res.Rails) != 2 || res.Rails[1].Latency.P50Ns != 1001 || res.Rails[1].Rail != 1 || res.Rails[1].Class != probe.ClassOK || res.Src != "a":
					t.Fatalf("result %+v", res)
				}
			}
		})
	}
}

// hungWorker never answers; onCall runs when the task arrives.
type hungWorker struct{ onCall func() }

func (h hungWorker) RoundTrip(req *http.Request) (*http.Response, error) {
	req.Body.Close()
	if h.onCall != nil {
		h.onCall()
	}
	<-req.Context().Done()
	return nil, req.Context().Err()
}

// TestPostTaskEnds checks the two ways a tracked task ends early: the pair
// timeout and its peer declared dead.
func TestPostTaskEnds(t *testing.T) {
	task := wire.Task{SweepID: "s", Src: "a", Dst: "b", Rails: []probe.RailPair{{Rail: 0}}}
	c := &Coordinator{inflight: newInflight()}
	c.client = &http.Client{Transport: hungWorker{}}
	ctx, release := c.inflight.track(context.Background(), time.Millisecond, "a", "b")
	_, perr := c.postTask(ctx, "a:1", time.Millisecond, task)
	release.done()
	if perr == nil || perr.Class != probe.ClassTimeout {
		t.Fatalf("hung worker: %+v, want a timeout", perr)
	}

	c.client = &http.Client{Transport: hungWorker{onCall: func() { c.inflight.nodeDead("b") }}}
	ctx, release = c.inflight.track(context.Background(), time.Hour, "a", "b")
	_, perr = c.postTask(ctx, "a:1", time.Hour, task)
	release.done()
	if perr == nil || perr.Class != probe.ClassPeerLost || !strings.Contains(perr.Cause, "worker b dead") {
		t.Fatalf("dead peer: %+v, want peer-lost", perr)
	}
	if n := c.inflight.running("a") + c.inflight.running("b"); n != 0 {
		t.Fatalf("%d tasks still tracked", n)
	}
}

// flakyWorker fails its first fails calls the way a kept-alive connection
// the worker just closed fails (broken pipe), then answers.
type flakyWorker struct {
	fails int
	calls *int
}

func (f flakyWorker) RoundTrip(req *http.Request) (*http.Response, error) {
	*f.calls++
	if *f.calls <= f.fails {
		req.Body.Close()
		return nil, &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}
	}
	return fakeWorker{}.RoundTrip(req)
}

// A task whose connection broke under it is sent once more on a fresh one;
// a worker that breaks it again is peer-lost.
func TestPostTaskRetriesAStaleConnection(t *testing.T) {
	task := wire.Task{SweepID: "s", Src: "a", Dst: "b", Rails: []probe.RailPair{{Rail: 0, Src: probe.Endpoint{Device: "mlx5_0"}}}}
	for _, tc := range []struct {
		fails, calls int
		want         probe.Class
	}{{1, 2, ""}, {2, 2, probe.ClassPeerLost}} {
		var calls int
		c := &Coordinator{client: &http.Client{Transport: flakyWorker{fails: tc.fails, calls: &calls}}, inflight: newInflight()}
		res, perr := c.postTask(context.Background(), "a:1", time.Minute, task)
		switch {
		case calls != tc.calls:
			t.Errorf("%d failures: %d calls, want %d", tc.fails, calls, tc.calls)
		case tc.want == "" && (perr != nil || len(res.Rails) != 1):
			t.Errorf("%d failures: %+v %+v", tc.fails, res, perr)
		case tc.want != "" && (perr == nil || perr.Class != tc.want || !strings.Contains(perr.Cause, "broken pipe")):
			t.Errorf("%d failures: %+v, want %s", tc.fails, perr, tc.want)
		}
	}
}

// hostRecorder notes the address each task went to.
type hostRecorder struct {
	fakeWorker
	hosts *[]string
}

func (h hostRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	*h.hosts = append(*h.hosts, req.URL.Host)
	return h.fakeWorker.RoundTrip(req)
}

// A worker's task target is kept with its registry entry, and follows the
// entry when gossip gives the worker a new API address.
func TestPhaseFollowsAMovedWorker(t *testing.T) {
	var hosts []string
	c := &Coordinator{log: slog.New(slog.DiscardHandler), reg: newRegistry(), inflight: newInflight(),
		client: &http.Client{Transport: hostRecorder{hosts: &hosts}}}
	c.reg.nodes["a"] = &regNode{NodeInfo: api.NodeInfo{Name: "a", State: "alive", APIAddr: "a:1"}}
	c.reg.nodes["b"] = &regNode{NodeInfo: api.NodeInfo{Name: "b", State: "alive", APIAddr: "b:1"}}
	phase := func() {
		t.Helper()
		cells := workerDispatch{c}.Phase(context.Background(), nil, sweep.Task{SweepID: "s", Round: 1, Spec: &sweep.Spec{PairTimeout: time.Minute},
			Src: matrix.Node{Name: "a"}, Dst: matrix.Node{Name: "b"}, Rails: []probe.RailPair{{Rail: 0, Src: probe.Endpoint{Device: "mlx5_0"}}}})
		if len(cells) != 1 || cells[0].Class != probe.ClassOK {
			t.Fatalf("cells %+v", cells)
		}
	}
	phase()
	phase()
	c.reg.mu.Lock()
	c.reg.nodes["a"].APIAddr = "a:2"
	c.reg.mu.Unlock()
	phase()
	if want := []string{"a:1", "a:1", "a:2"}; strings.Join(hosts, " ") != strings.Join(want, " ") {
		t.Fatalf("tasks went to %v, want %v", hosts, want)
	}
	if tt := c.reg.nodes["a"].target.Load(); tt == nil || tt.addr != "a:2" {
		t.Fatalf("the entry keeps target %+v, want a:2's", tt)
	}
}

// A pair with a worker gossip calls dead, left or never heard of is
// peer-lost in both directions without a task being sent.
func TestPhaseRefusesAGoneWorker(t *testing.T) {
	reg := newRegistry()
	reg.nodes["a"] = &regNode{NodeInfo: api.NodeInfo{Name: "a", State: "alive", APIAddr: "127.0.0.1:1"}}
	reg.nodes["b"] = &regNode{NodeInfo: api.NodeInfo{Name: "b", State: "dead", APIAddr: "127.0.0.1:2"}}
	reg.nodes["c"] = &regNode{NodeInfo: api.NodeInfo{Name: "c", State: "left", APIAddr: "127.0.0.1:3"}}
	w := workerDispatch{c: &Coordinator{reg: reg, inflight: newInflight()}}
	rails := []probe.RailPair{{Rail: 0}, {Rail: 1}}
	for _, tc := range []struct{ src, dst, want string }{
		{"a", "b", "worker b is dead in gossip"},
		{"c", "a", "worker c is left in gossip"},
		{"a", "z", "worker z is unknown in gossip"},
	} {
		cells := w.Phase(context.Background(), nil, sweep.Task{SweepID: "s", Round: 1, Spec: &sweep.Spec{},
			Src: matrix.Node{Name: tc.src}, Dst: matrix.Node{Name: tc.dst}, Rails: rails, Reverse: rails})
		if len(cells) != 4 {
			t.Fatalf("%s > %s: %d cells, want 4", tc.src, tc.dst, len(cells))
		}
		for _, c := range cells {
			if c.Class != probe.ClassPeerLost || c.Error == nil || c.Error.Cause != tc.want {
				t.Fatalf("%s > %s: cell %s>%s rail %d is %s (%v), want peer-lost: %s", tc.src, tc.dst, c.Src, c.Dst, c.Rail, c.Class, c.Error, tc.want)
			}
		}
	}
}

// countingConn counts the writes of a connection the transport dialled.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// TestTaskRequestOneWrite: over net/http's own Transport a task goes out
// in one write, headers and body together; a body the transport cannot
// see is in memory makes it flush the headers on their own first.
func TestTaskRequestOneWrite(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	var writes atomic.Int64
	var d net.Dialer
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{c, &writes}, nil
	}}
	defer tr.CloseIdleConnections()
	c := &Coordinator{client: &http.Client{Transport: tr}}
	tt, err := c.taskTarget(strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	ep := probe.Endpoint{Device: "mlx5_0", Port: 1, GIDIndex: 3}
	task := wire.Task{SweepID: "s", Round: 1, Src: "a", Dst: "b", DstAPI: "b:7471", Rails: []probe.RailPair{{Rail: 0, Src: ep, Dst: ep}}}
	var enc wire.TaskEncoder
	for i := range 3 {
		before := writes.Load()
		resp, err := c.roundTrip(c.taskRequest(context.Background(), tt, &task, &enc))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n := writes.Load() - before; n != 1 {
			t.Fatalf("task %d took %d writes", i, n)
		}
	}
}
