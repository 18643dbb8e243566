package worker

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

const fuzzToken = "t0k"

// refusingFabric has two HCAs and refuses every Open as port-down, so a
// request that passes validation ends in a classified failure without a
// session, a goroutine or a network call. It records Opens handed
// parameters a provider must never see.
type refusingFabric struct {
	mu  sync.Mutex
	bad []string
}

func fuzzPorts() []probe.Port {
	return []probe.Port{
		{Device: "mlx5_0", Port: 1, Rail: 0, LinkLayer: "Ethernet", State: "ACTIVE", MTU: 4096, GIDIndex: 3, Usable: true},
		{Device: "mlx5_1", Port: 1, Rail: 1, LinkLayer: "Ethernet", State: "ACTIVE", MTU: 4096, GIDIndex: 3, Usable: true},
	}
}

func (f *refusingFabric) Name() string { return "fuzz" }

func (f *refusingFabric) Ports(context.Context) ([]probe.Port, error) { return fuzzPorts(), nil }

func (f *refusingFabric) Open(_ context.Context, ep probe.Endpoint, p probe.TestParams) (fabric.Session, error) {
	if err := p.Validate(); err != nil {
		f.mu.Lock()
		f.bad = append(f.bad, err.Error())
		f.mu.Unlock()
	}
	return nil, &probe.Error{Class: probe.ClassPortDown, Verb: "ibv_query_port", Cause: "the fuzz fabric refuses every test"}
}

// fuzzAgent is an Agent with just what its HTTP handler needs: no gossip,
// no listener.
func fuzzAgent() (*Agent, *refusingFabric) {
	fab := &refusingFabric{}
	a := &Agent{opts: Options{Name: "node-01", Fabric: fab, Token: fuzzToken}, log: slog.New(slog.DiscardHandler), client: &http.Client{}}
	a.sessions, a.peers = a.sessionServer(), a.sessionClient()
	a.inv = probe.Inventory{Version: probe.Version, Node: "node-01", Provider: "fuzz", Ports: fuzzPorts()}
	return a, fab
}

func post(a *Agent, path string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", wire.ContentType)
	req.Header.Set("Authorization", "Bearer "+fuzzToken)
	rec := httptest.NewRecorder()
	a.routes().ServeHTTP(rec, req)
	return rec
}

// wantRefusal checks a rejection is a wire error that says what is wrong
// and what to do.
func wantRefusal(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	e, ok := wire.DecodeError(rec.Header().Get("Content-Type"), rec.Body.Bytes())
	if !ok || e.Cause == "" || e.Fix == "" {
		t.Fatalf("HTTP %d without a classified wire error: %q", rec.Code, rec.Body)
	}
}

func validTask() wire.Task {
	return wire.Task{SweepID: "s1", Round: 0, Src: "node-01", Dst: "node-02", DstAPI: "127.0.0.1:1",
		Rails: []probe.RailPair{{Rail: 0, Src: probe.Endpoint{Device: "mlx5_0", Port: 1, GIDIndex: 3},
			Dst: probe.Endpoint{Device: "mlx5_0", Port: 1, GIDIndex: 3}}},
		Params: probe.DefaultTestParams(), Deadline: time.Unix(1700000000, 0).UTC()}
}

// FuzzTaskRequest drives POST /v1/tasks. A task is accepted (200) only when
// source, destination, rails and parameters check out, and the answer has
// one classified result per rail; anything else is a 400 with a classified
// wire error. The fabric never sees invalid parameters.
func FuzzTaskRequest(f *testing.F) {
	valid := validTask()
	f.Add(wire.TaskMsg.Append(nil, &valid))
	two := validTask()
	two.Rails = append(two.Rails, probe.RailPair{Rail: 1, Src: probe.Endpoint{Device: "mlx5_1", Port: 1}, Dst: probe.Endpoint{Device: "mlx5_1", Port: 1}})
	f.Add(wire.TaskMsg.Append(nil, &two))
	for _, mutate := range []func(*wire.Task){
		func(t *wire.Task) { t.Src = "node-09" },
		func(t *wire.Task) { t.Dst = "" },
		func(t *wire.Task) { t.DstAPI = "" },
		func(t *wire.Task) { t.Rails = nil },
		func(t *wire.Task) { t.Params.LatencyIters = 0 },
		func(t *wire.Task) { t.Params.BWSize = 1 << 31 },
		func(t *wire.Task) { t.Params.Timeout = -time.Second },
		func(t *wire.Task) { t.Params.TxDepth = 0 },
	} {
		bad := validTask()
		mutate(&bad)
		f.Add(wire.TaskMsg.Append(nil, &bad))
	}
	f.Add([]byte{})
	f.Add([]byte(`{"sweep_id":"s1"}`))
	f.Add(append([]byte{wire.TaskMsg.Version() + 1}, wire.TaskMsg.Append(nil, &valid)[1:]...))
	f.Fuzz(func(t *testing.T, body []byte) {
		a, fab := fuzzAgent()
		rec := post(a, "/v1/tasks", body)
		switch rec.Code {
		case http.StatusOK:
			task, err := wire.TaskMsg.Decode(body)
			switch {
			case err != nil:
				t.Fatalf("accepted a body the task codec refuses: %v", err)
			case task.Src != "node-01", task.Dst == "", task.DstAPI == "", len(task.Rails) == 0:
				t.Fatalf("accepted an invalid task: %+v", task)
			case task.Params.Validate() != nil:
				t.Fatalf("accepted invalid params: %v", task.Params.Validate())
			}
			res, err := wire.TaskResultMsg.Decode(rec.Body.Bytes())
			if err != nil || len(res.Rails) != len(task.Rails) {
				t.Fatalf("answer %q for %d rails (%v)", rec.Body, len(task.Rails), err)
			}
			for _, rr := range res.Rails {
				if rr.Class == "" || rr.Class == probe.ClassOK {
					t.Fatalf("rail %d: class %q from a fabric that refuses every test", rr.Rail, rr.Class)
				}
			}
		case http.StatusBadRequest:
			wantRefusal(t, rec)
		default:
			t.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
		}
		if len(fab.bad) > 0 {
			t.Fatalf("the fabric was handed invalid parameters: %v", fab.bad)
		}
	})
}

func validSession() wire.SessionOpen {
	return wire.SessionOpen{SweepID: "s1", Src: "node-02", Dst: "node-01", Deadline: time.Unix(1700000000, 0).UTC(),
		Params: probe.DefaultTestParams(),
		Rails: []wire.SessionRail{{Rail: 0, Local: probe.Endpoint{Device: "mlx5_0", Port: 1, GIDIndex: 3},
			Initiator: probe.QPInfo{Node: "node-02", Device: "mlx5_0", Port: 1, LinkLayer: "Ethernet", QPN: 0x123, PSN: 0x456,
				GID: "::ffff:10.0.0.2", GIDIndex: 3, MTU: 4096, RKey: 1, Addr: 0x1000, Size: 65536}}}}
}

// FuzzSessionRequest drives POST /v1/sessions/batch. With sign set the
// harness stamps a fresh, valid ticket on whatever the body decodes to, so
// the fuzzer gets past the ticket to the field checks. A rail reaches the
// fabric (which refuses it as port-down here) only if every field a
// provider would hand to the HCA is in range, checked again below
// independently of the handler; every refusal is a classified wire error.
func FuzzSessionRequest(f *testing.F) {
	enc := func(r wire.SessionOpen) []byte { return wire.SessionOpenMsg.Append(nil, &r) }
	f.Add(enc(validSession()), true)
	f.Add(enc(validSession()), false) // no ticket
	ib := validSession()
	ib.Rails[0].Initiator.LinkLayer, ib.Rails[0].Initiator.GID, ib.Rails[0].Initiator.LID = "InfiniBand", "fe80::1", 7
	f.Add(enc(ib), true)
	for _, mutate := range []func(*wire.SessionOpen){
		func(r *wire.SessionOpen) { r.Dst = "node-03" },
		func(r *wire.SessionOpen) { r.Src = "node-04" },
		func(r *wire.SessionOpen) { r.Rails = nil },
		func(r *wire.SessionOpen) { r.Rails = append(r.Rails, r.Rails[0]); r.Rails[1].Local.Device = "mlx5_1" },
		func(r *wire.SessionOpen) { r.Rails[0].Local.Device = "mlx5_9" },
		func(r *wire.SessionOpen) { r.Rails[0].Local.Port = 2 },
		func(r *wire.SessionOpen) { r.Rails[0].Local.GIDIndex = -2 },
		func(r *wire.SessionOpen) { r.Rails[0].Initiator.QPN = 0 },
		func(r *wire.SessionOpen) { r.Rails[0].Initiator.QPN = 1 << 24 },
		func(r *wire.SessionOpen) { r.Rails[0].Initiator.PSN = 1 << 24 },
		func(r *wire.SessionOpen) { r.Rails[0].Initiator.MTU = 1500 },
		func(r *wire.SessionOpen) { r.Rails[0].Initiator.Size = -1 },
		func(r *wire.SessionOpen) { r.Rails[0].Initiator.LinkLayer = "Infiniband" },
		func(r *wire.SessionOpen) { r.Rails[0].Initiator.GID = "10.0.0.2" },
		func(r *wire.SessionOpen) { r.Rails[0].Initiator.Device = strings.Repeat("m", 65) },
		func(r *wire.SessionOpen) { r.Params.LatencySize = 0 },
	} {
		bad := validSession()
		mutate(&bad)
		f.Add(enc(bad), true)
	}
	f.Add([]byte{}, false)
	f.Add([]byte(`{"sweep_id":"s1"}`), true)
	f.Fuzz(func(t *testing.T, body []byte, sign bool) {
		if sign {
			if r, err := wire.SessionOpenMsg.Decode(body); err == nil {
				r.Deadline = time.Now().Add(time.Minute).UTC()
				r.Ticket = probe.SignTicket([]byte(fuzzToken), r.SweepID, r.Src, r.Dst, r.Deadline)
				body = enc(r)
			}
		}
		a, fab := fuzzAgent()
		rec := post(a, "/v1/sessions/batch", body)
		switch rec.Code {
		case http.StatusOK:
			r, err := wire.SessionOpenMsg.Decode(body)
			if err != nil {
				t.Fatalf("answered a body the session codec refuses: %v", err)
			}
			if why := openProblem(r); why != "" {
				t.Fatalf("served an open with %s: %+v", why, r)
			}
			rep, err := wire.SessionOpenedMsg.Decode(rec.Body.Bytes())
			if err != nil || len(rep.Rails) != len(r.Rails) {
				t.Fatalf("answer %q for %d rails (%v)", rec.Body, len(r.Rails), err)
			}
			for i, o := range rep.Rails {
				switch {
				case o.Error == nil || o.Error.Cause == "":
					t.Fatalf("rail %d opened on a fabric that refuses every test: %+v", i, o)
				case o.Error.Class == probe.ClassPortDown:
					// validated, then refused by the fabric
					if why := railProblem(r.Rails[i]); why != "" {
						t.Fatalf("rail %d reached the fabric with %s: %+v", i, why, r.Rails[i])
					}
				}
			}
		case http.StatusBadRequest, http.StatusForbidden:
			wantRefusal(t, rec)
		default:
			t.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
		}
		if len(fab.bad) > 0 {
			t.Fatalf("the fabric was handed invalid parameters: %v", fab.bad)
		}
		if n := a.sessions.Len(); n != 0 {
			t.Fatalf("%d sessions left open by a refused request", n)
		}
	})
}

// openProblem and railProblem are the fuzz oracle: what must hold before
// an open, and then each rail, may touch the fabric, written out
// independently of the handler.
func openProblem(r wire.SessionOpen) string {
	switch {
	case len(r.Rails) == 0 || len(r.Rails) > 1024:
		return "no rails or too many"
	case r.Params.Validate() != nil:
		return "invalid params"
	case r.Dst != "node-01":
		return "a session for another node"
	case r.Ticket != probe.SignTicket([]byte(fuzzToken), r.SweepID, r.Src, r.Dst, r.Deadline):
		return "a ticket that does not verify"
	}
	for _, rl := range r.Rails {
		if r.Src == "" || r.Src != rl.Initiator.Node {
			return "a source that is not the initiator"
		}
	}
	return ""
}

func railProblem(rl wire.SessionRail) string {
	q := rl.Initiator
	switch {
	case !slices.ContainsFunc(fuzzPorts(), func(p probe.Port) bool { return p.Device == rl.Local.Device && p.Port == rl.Local.Port }):
		return "a local port the node does not have"
	case rl.Local.GIDIndex < -1 || rl.Local.GIDIndex > 0xffff:
		return "a GID index out of range"
	case q.QPN == 0 || q.QPN > 0xffffff || q.PSN > 0xffffff:
		return "a QPN or PSN outside 24 bits"
	case !slices.Contains([]int{256, 512, 1024, 2048, 4096}, q.MTU):
		return "an MTU that is not an IB MTU"
	case q.Size < 0 || q.Size > 1<<30:
		return "a buffer size out of range"
	case q.LinkLayer != "InfiniBand" && q.LinkLayer != "Ethernet":
		return "an unknown link layer"
	case q.LinkLayer == "Ethernet" && !strings.Contains(q.GID, ":"):
		return "a RoCE GID that is not in IPv6 form"
	case q.Device == "" || len(q.Device) > 64:
		return "a missing or overlong device name"
	}
	return ""
}
