package worker

import (
	"bytes"
	"context"
	"encoding/json"
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
	a := &Agent{opts: Options{Name: "node-01", Fabric: fab, Token: fuzzToken}, log: slog.New(slog.DiscardHandler),
		sessions: newSessionTable(), client: &http.Client{}}
	a.inv = probe.Inventory{Version: probe.Version, Node: "node-01", Provider: "fuzz", Ports: fuzzPorts()}
	return a, fab
}

func post(a *Agent, path string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+fuzzToken)
	rec := httptest.NewRecorder()
	a.routes().ServeHTTP(rec, req)
	return rec
}

// wantRefusal checks a rejection is a JSON ErrorReply that says what is
// wrong and what to do.
func wantRefusal(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("HTTP %d with Content-Type %q, want JSON", rec.Code, ct)
	}
	var er probe.ErrorReply
	if err := json.Unmarshal(rec.Body.Bytes(), &er); err != nil || er.Error == nil || er.Error.Cause == "" || er.Error.Class == "" {
		t.Fatalf("HTTP %d without a classified JSON error: %q (%v)", rec.Code, rec.Body, err)
	}
}

// firstValue decodes the first JSON value the way the handler reads it,
// without its strictness: the oracle for what was accepted.
func firstValue(body []byte, v any) error { return json.NewDecoder(bytes.NewReader(body)).Decode(v) }

func validTask() probe.Task {
	return probe.Task{Version: probe.Version, SweepID: "s1", Round: 0, Src: "node-01", Dst: "node-02", DstAPI: "127.0.0.1:1",
		Rails: []probe.RailPair{{Rail: 0, Src: probe.Endpoint{Device: "mlx5_0", Port: 1, GIDIndex: 3},
			Dst: probe.Endpoint{Device: "mlx5_0", Port: 1, GIDIndex: 3}}},
		Params: probe.DefaultTestParams(), Deadline: time.Unix(1700000000, 0).UTC()}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// FuzzTaskRequest drives POST /v1/tasks. A task is accepted (200) only when
// version, source, destination, rails and parameters check out, and the
// answer has one classified result per rail; anything else is a 400 with a
// classified JSON error. The fabric never sees invalid parameters.
func FuzzTaskRequest(f *testing.F) {
	valid := validTask()
	f.Add(mustJSON(valid))
	two := validTask()
	two.Rails = append(two.Rails, probe.RailPair{Rail: 1, Src: probe.Endpoint{Device: "mlx5_1", Port: 1}, Dst: probe.Endpoint{Device: "mlx5_1", Port: 1}})
	f.Add(mustJSON(two))
	for _, mutate := range []func(*probe.Task){
		func(t *probe.Task) { t.Version = 2 },
		func(t *probe.Task) { t.Src = "node-09" },
		func(t *probe.Task) { t.Dst = "" },
		func(t *probe.Task) { t.DstAPI = "" },
		func(t *probe.Task) { t.Rails = nil },
		func(t *probe.Task) { t.Params.LatencyIters = 0 },
		func(t *probe.Task) { t.Params.BWSize = 1 << 31 },
		func(t *probe.Task) { t.Params.Timeout = -time.Second },
		func(t *probe.Task) { t.Params.TxDepth = 0 },
	} {
		bad := validTask()
		mutate(&bad)
		f.Add(mustJSON(bad))
	}
	for _, s := range []string{``, `null`, `[]`, `{}`, `{"version":1`, `{"version":"1"}`, `{"unknown":1}`,
		`{"version":1,"deadline":"yesterday"}`, `{"version":1e99}`, `{"rails":[{"rail":"x"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		a, fab := fuzzAgent()
		rec := post(a, "/v1/tasks", body)
		switch rec.Code {
		case http.StatusOK:
			var task probe.Task
			if err := firstValue(body, &task); err != nil {
				t.Fatalf("accepted a body encoding/json cannot read: %v", err)
			}
			switch {
			case task.Version != probe.Version, task.Src != "node-01", task.Dst == "", task.DstAPI == "", len(task.Rails) == 0:
				t.Fatalf("accepted an invalid task: %+v", task)
			case task.Params.Validate() != nil:
				t.Fatalf("accepted invalid params: %v", task.Params.Validate())
			}
			var res probe.TaskResult
			if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || len(res.Rails) != len(task.Rails) {
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

func validSession() probe.SessionRequest {
	return probe.SessionRequest{Version: probe.Version, SweepID: "s1", Src: "node-02", Dst: "node-01",
		Deadline: time.Unix(1700000000, 0).UTC(),
		Local:    probe.Endpoint{Device: "mlx5_0", Port: 1, GIDIndex: 3},
		Initiator: probe.QPInfo{Node: "node-02", Device: "mlx5_0", Port: 1, LinkLayer: "Ethernet", QPN: 0x123, PSN: 0x456,
			GID: "::ffff:10.0.0.2", GIDIndex: 3, MTU: 4096, RKey: 1, Addr: 0x1000, Size: 65536},
		Params: probe.DefaultTestParams()}
}

// FuzzSessionRequest drives POST /v1/sessions. With sign set the harness
// stamps a fresh, valid ticket on whatever the body decodes to, so the
// fuzzer gets past the ticket to the field checks. A request reaches the
// fabric (422 here, since the fabric refuses) only if every field a
// provider would hand to the HCA is in range, checked again below
// independently of the handler; every refusal is a classified JSON 4xx.
func FuzzSessionRequest(f *testing.F) {
	f.Add(mustJSON(validSession()), true)
	f.Add(mustJSON(validSession()), false) // no ticket
	ib := validSession()
	ib.Initiator.LinkLayer, ib.Initiator.GID, ib.Initiator.LID = "InfiniBand", "fe80::1", 7
	f.Add(mustJSON(ib), true)
	for _, mutate := range []func(*probe.SessionRequest){
		func(r *probe.SessionRequest) { r.Version = 0 },
		func(r *probe.SessionRequest) { r.Dst = "node-03" },
		func(r *probe.SessionRequest) { r.Src = "node-04" },
		func(r *probe.SessionRequest) { r.Local.Device = "mlx5_9" },
		func(r *probe.SessionRequest) { r.Local.Port = 2 },
		func(r *probe.SessionRequest) { r.Local.GIDIndex = -2 },
		func(r *probe.SessionRequest) { r.Initiator.QPN = 0 },
		func(r *probe.SessionRequest) { r.Initiator.QPN = 1 << 24 },
		func(r *probe.SessionRequest) { r.Initiator.PSN = 1 << 24 },
		func(r *probe.SessionRequest) { r.Initiator.MTU = 1500 },
		func(r *probe.SessionRequest) { r.Initiator.Size = -1 },
		func(r *probe.SessionRequest) { r.Initiator.LinkLayer = "Infiniband" },
		func(r *probe.SessionRequest) { r.Initiator.GID = "10.0.0.2" },
		func(r *probe.SessionRequest) { r.Initiator.Device = strings.Repeat("m", 65) },
		func(r *probe.SessionRequest) { r.Params.LatencySize = 0 },
	} {
		bad := validSession()
		mutate(&bad)
		f.Add(mustJSON(bad), true)
	}
	for _, s := range []string{``, `null`, `[]`, `{"version":1`, `{"unknown":1}`, `{"initiator":{"qpn":-1}}`,
		`{"initiator":{"qpn":4294967296}}`, `{"local":{"gid_index":1e3}}`} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, sign bool) {
		if sign {
			var r probe.SessionRequest
			if json.Unmarshal(body, &r) == nil {
				r.Deadline = time.Now().Add(time.Minute)
				r.Ticket = probe.SignTicket([]byte(fuzzToken), r.SweepID, r.Src, r.Dst, r.Deadline)
				body = mustJSON(r)
			}
		}
		a, fab := fuzzAgent()
		rec := post(a, "/v1/sessions", body)
		switch rec.Code {
		case http.StatusUnprocessableEntity: // validated, then refused by the fabric
			var r probe.SessionRequest
			if err := firstValue(body, &r); err != nil {
				t.Fatalf("reached the fabric with a body encoding/json cannot read: %v", err)
			}
			if why := sessionProblem(r); why != "" {
				t.Fatalf("reached the fabric with %s: %+v", why, r)
			}
			wantRefusal(t, rec)
		case http.StatusBadRequest, http.StatusForbidden:
			wantRefusal(t, rec)
		default:
			t.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
		}
		if len(fab.bad) > 0 {
			t.Fatalf("the fabric was handed invalid parameters: %v", fab.bad)
		}
		if n := a.sessions.len(); n != 0 {
			t.Fatalf("%d sessions left open by a refused request", n)
		}
	})
}

// sessionProblem is the fuzz oracle: what must hold before a session
// request may touch the fabric, written out independently of the handler.
func sessionProblem(r probe.SessionRequest) string {
	q := r.Initiator
	switch {
	case r.Version != probe.Version:
		return "a wrong version"
	case r.Params.Validate() != nil:
		return "invalid params"
	case r.Dst != "node-01":
		return "a session for another node"
	case r.Src == "" || r.Src != q.Node:
		return "a source that is not the initiator"
	case r.Ticket != probe.SignTicket([]byte(fuzzToken), r.SweepID, r.Src, r.Dst, r.Deadline):
		return "a ticket that does not verify"
	case !slices.ContainsFunc(fuzzPorts(), func(p probe.Port) bool { return p.Device == r.Local.Device && p.Port == r.Local.Port }):
		return "a local port the node does not have"
	case r.Local.GIDIndex < -1 || r.Local.GIDIndex > 0xffff:
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
