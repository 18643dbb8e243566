package worker

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// handlers routes requests to in-process worker APIs and counts them.
type handlers struct {
	mu    sync.Mutex
	h     map[string]http.Handler
	calls map[string]int
	// before, when set, runs first and may fail the request the way the
	// transport would.
	before func() error
}

func (p *handlers) RoundTrip(req *http.Request) (*http.Response, error) {
	p.mu.Lock()
	h := p.h[req.URL.Host]
	p.calls[req.Method+" "+req.URL.Path]++
	before := p.before
	p.mu.Unlock()
	if before != nil {
		if err := before(); err != nil {
			return nil, err
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result(), nil
}

func (p *handlers) count(prefix string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for k, v := range p.calls {
		if strings.HasPrefix(k, prefix) {
			n += v
		}
	}
	return n
}

func twoAgents(t *testing.T, faults ...string) (*Agent, *Agent, *handlers) {
	t.Helper()
	return agentPair(t, Options{}, faults...)
}

// agentPair starts workers a and b on one sim fabric, each with o's token
// and task hook, their APIs reachable through the returned handlers.
func agentPair(t *testing.T, o Options, faults ...string) (*Agent, *Agent, *handlers) {
	t.Helper()
	return agentPairOn(t, o, nil, faults...)
}

// agentPairOn is agentPair with each worker's fabric wrapped by wrap (nil:
// as it is).
func agentPairOn(t *testing.T, o Options, wrap func(name string, f fabric.Fabric) fabric.Fabric, faults ...string) (*Agent, *Agent, *handlers) {
	t.Helper()
	fs, err := sim.ParseFaults(faults)
	if err != nil {
		t.Fatal(err)
	}
	fab, err := sim.New(sim.Config{Seed: 1, Faults: fs})
	if err != nil {
		t.Fatal(err)
	}
	rt := &handlers{h: map[string]http.Handler{}, calls: map[string]int{}}
	var mnet memberlist.MockNetwork
	tr := []*memberlist.MockTransport{mnet.NewTransport("a"), mnet.NewTransport("b")}
	var out []*Agent
	for i, name := range []string{"a", "b"} {
		f := fabric.Adapt(fab.Node(name))
		if wrap != nil {
			f = wrap(name, f)
		}
		ag, err := Start(context.Background(), Options{Name: name, Fabric: f, Transport: tr[i],
			APIListen: "127.0.0.1:0", HTTPTransport: rt, Logger: slog.New(slog.DiscardHandler), Token: o.Token, OnTask: o.OnTask})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ag.Kill)
		rt.h[ag.APIAddr()] = ag.Handler()
		out = append(out, ag)
	}
	return out[0], out[1], rt
}

func railTask(a, b *Agent, rails int) wire.Task {
	t := wire.Task{SweepID: "s", Src: "a", Dst: "b", DstAPI: b.APIAddr(), Params: probe.DefaultTestParams(),
		Deadline: time.Now().Add(time.Minute)}
	t.Params.LatencyIters, t.Params.BWSize = 50, 0
	for r := 0; r < rails; r++ {
		dev := a.Inventory().Ports[r].Device
		t.Rails = append(t.Rails, probe.RailPair{Rail: r, Src: probe.Endpoint{Device: dev, Port: 1, GIDIndex: -1, Rail: r},
			Dst: probe.Endpoint{Device: dev, Port: 1, GIDIndex: -1, Rail: r}})
	}
	return t
}

func TestRunTaskBatchesPeerSessions(t *testing.T) {
	a, b, rt := twoAgents(t, "b/mlx5_2:down")
	res := a.RunTask(context.Background(), railTask(a, b, 8))
	for _, rr := range res.Rails {
		want := probe.ClassOK
		if rr.Rail == 2 {
			want = probe.ClassPortDown // the responder cannot open its half; the batch says so for that rail only
		}
		if rr.Class != want {
			t.Errorf("rail %d: class %s (%v), want %s", rr.Rail, rr.Class, rr.Error, want)
		}
	}
	if n := rt.count("POST /v1/sessions/batch"); n != 1 {
		t.Errorf("%d batch opens, want 1", n)
	}
	if n := rt.count("POST /v1/sessions/close"); n != 1 {
		t.Errorf("%d batch closes, want 1", n)
	}
	if n := b.sessions.Len(); n != 0 {
		t.Errorf("%d responder sessions left open on the peer", n)
	}
}

// BenchmarkRunTask8Rails is one direction of a quick sweep on the sim
// fabric with one latency iteration, so it measures the control path: local
// and remote session set-up, the batch exchange, connect and tear-down.
func BenchmarkRunTask8Rails(b *testing.B) {
	t := &testing.T{}
	a, peer, _ := twoAgents(t)
	defer a.Kill()
	defer peer.Kill()
	task := railTask(a, peer, 8)
	task.Params.LatencyIters, task.Params.Warmup = 1, 0
	b.ReportAllocs()
	for b.Loop() {
		res := a.RunTask(context.Background(), task)
		if res.Rails[0].Class != probe.ClassOK {
			b.Fatal(res.Rails[0].Error)
		}
	}
}
