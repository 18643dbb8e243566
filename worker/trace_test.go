package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/pathtrace"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// fakeTracer answers a flow with a two-hop path, fails port 49153, and
// with block set waits for its context; it records what it was asked and
// how many traces ran at once.
type fakeTracer struct {
	block bool

	mu            sync.Mutex
	asked         []pathtrace.Flow
	running, most int
}

var leaf = netip.MustParseAddr("10.0.1.1")

func (f *fakeTracer) Trace(ctx context.Context, fl pathtrace.Flow) (pathtrace.Path, error) {
	f.mu.Lock()
	f.asked = append(f.asked, fl)
	f.running++
	f.most = max(f.most, f.running)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
	}()
	if f.block {
		<-ctx.Done()
		return pathtrace.Path{Flow: fl, Why: "stopped at TTL 1: " + context.Cause(ctx).Error()}, nil
	}
	if fl.SrcPort == 49153 {
		return pathtrace.Path{Flow: fl}, errors.New("pathtrace: source port 49153 on 10.0.1.2 is in use by another socket")
	}
	return pathtrace.Path{Flow: fl, Hops: []pathtrace.Hop{{TTL: 1, Addr: leaf, Answer: "time exceeded", Probes: 1}, {TTL: 2, Probes: 2, Reason: "no ICMP answer"}},
		Why: "the destination did not answer"}, nil
}

func postTrace(t *testing.T, h http.Handler, token, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/v1/trace", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func traceReply(t *testing.T, rec *httptest.ResponseRecorder) TraceReply {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
	}
	var r TraceReply
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func flowsJSON(ports ...int) string {
	var fs []TraceFlow
	for _, p := range ports {
		fs = append(fs, TraceFlow{SrcIP: "10.0.1.2", DstIP: "10.0.2.2", SrcPort: p})
	}
	b, _ := json.Marshal(TraceRequest{Flows: fs})
	return string(b)
}

// Each flow gets its path, in the request's order, RoCE's port filled in;
// a flow that cannot be traced says why and the others still are.
func TestTraceAnswersEveryFlow(t *testing.T) {
	f := &fakeTracer{}
	h := &traceHandler{tracer: f, bound: time.Minute, log: slog.New(slog.DiscardHandler)}
	r := traceReply(t, postTrace(t, h, "", flowsJSON(49152, 49153, 49154)))
	if len(r.Paths) != 3 || len(f.asked) != 3 {
		t.Fatalf("%d paths for %d traces, want 3", len(r.Paths), len(f.asked))
	}
	for i, p := range r.Paths {
		if want := uint16(49152 + i); p.Flow.SrcPort != want || p.Flow.DstPort != 4791 || p.Flow.Src != netip.MustParseAddr("10.0.1.2") {
			t.Errorf("path %d is of flow %+v, want source port %d to 4791", i, p.Flow, want)
		}
	}
	if p := r.Paths[1]; !strings.Contains(p.Error, "source port 49153") || len(p.Hops) != 0 {
		t.Errorf("the failing flow: %+v", p)
	}
	if p := r.Paths[0]; p.Error != "" || len(p.Hops) != 2 || p.Hops[0].Addr != leaf || p.Hops[1].Known() || p.Hops[1].Reason == "" {
		t.Errorf("a traced flow: %+v", p)
	}
}

// A request the worker cannot trace is refused with the field at fault
// and the fix, before any probe.
func TestTraceRefusesBadRequests(t *testing.T) {
	many := make([]int, maxTraceFlows+1)
	for i := range many {
		many[i] = 49152 + i
	}
	for _, c := range []struct{ body, want string }{
		{`{"flows": []}`, "flows is empty"},
		{`{"flow": []}`, `unknown field "flow"`},
		{`not json`, "read the JSON body"},
		{flowsJSON(many...), "65 flows, at most 64"},
		{`{"flows": [{"src_ip": "10.0.1.2", "dst_ip": "host2", "src_port": 49152}]}`, `flows[0]: dst_ip "host2" is not an IP address`},
		{`{"flows": [{"src_ip": "10.0.1.2", "dst_ip": "10.0.2.2", "src_port": 70000}]}`, "flows[0]: src_port 70000"},
		{`{"flows": [{"src_ip": "10.0.1.2", "dst_ip": "10.0.2.2"}]}`, "flows[0]: src_port 0"},
		{`{"flows": [{"src_ip": "10.0.1.2", "dst_ip": "10.0.2.2", "src_port": 1, "dst_port": -1}]}`, "flows[0]: dst_port -1"},
		{`{"flows": [{"src_ip": "10.0.1.2", "dst_ip": "fd00::2", "src_port": 49152}]}`, "different families"},
		{`{"flows": [{"src_ip": "fe80::1", "dst_ip": "fe80::2", "src_port": 49152}]}`, "link-local"},
	} {
		f := &fakeTracer{}
		h := &traceHandler{tracer: f, bound: time.Minute, log: slog.New(slog.DiscardHandler)}
		rec := postTrace(t, h, "", c.body)
		var got struct{ Error *probe.Error }
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusBadRequest || got.Error == nil {
			t.Errorf("%.60s: HTTP %d %s", c.body, rec.Code, rec.Body)
			continue
		}
		if !strings.Contains(got.Error.Cause, c.want) || got.Error.Fix == "" || len(f.asked) != 0 {
			t.Errorf("%.60s: cause %q (want %q), fix %q, %d traces", c.body, got.Error.Cause, c.want, got.Error.Fix, len(f.asked))
		}
	}
}

// However slow the hops, a request ends within its bound, with every flow
// answered (the ones never started say so), at most traceParallel traces
// at once.
func TestTraceIsBounded(t *testing.T) {
	f := &fakeTracer{block: true}
	h := &traceHandler{tracer: f, bound: 50 * time.Millisecond, log: slog.New(slog.DiscardHandler)}
	ports := make([]int, 10)
	for i := range ports {
		ports[i] = 49152 + i
	}
	start := time.Now()
	r := traceReply(t, postTrace(t, h, "", flowsJSON(ports...)))
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("a request bounded to 50ms took %v", took)
	}
	if len(r.Paths) != len(ports) || f.most == 0 || f.most > traceParallel {
		t.Fatalf("%d paths, %d traces at most at once (want 1..%d)", len(r.Paths), f.most, traceParallel)
	}
	for i, p := range r.Paths {
		ended := strings.Contains(p.Why, "bound ran out") || strings.Contains(p.Error, "not traced: the trace request's 50ms bound ran out")
		if !ended || p.Flow.SrcPort != uint16(ports[i]) {
			t.Errorf("flow %d: %+v", i, p)
		}
	}
}

// The route is the Agent's, behind its token, and traces for real: a flow
// from loopback to one of its closed ports ends at TTL 1 with the port
// unreachable, without privileges.
func TestTraceRoute(t *testing.T) {
	a, _ := fuzzAgent()
	h := a.routes()
	if rec := postTrace(t, h, "", flowsJSON(49152)); rec.Code != http.StatusUnauthorized {
		t.Fatalf("without the token: HTTP %d", rec.Code)
	}
	ports := freePorts(t, 2)
	src, dst := ports[0], ports[1]
	body := fmt.Sprintf(`{"flows": [{"src_ip": "127.0.0.1", "dst_ip": "127.0.0.1", "src_port": %d, "dst_port": %d}]}`, src, dst)
	r := traceReply(t, postTrace(t, h, fuzzToken, body))
	if len(r.Paths) != 1 {
		t.Fatalf("paths %+v", r.Paths)
	}
	p := r.Paths[0]
	if p.Error != "" || !p.Reached || len(p.Hops) != 1 || p.Hops[0].Answer != "port unreachable" {
		t.Fatalf("path %+v", p)
	}
	if !strings.Contains(p.Why, "port unreachable at TTL 1") {
		t.Errorf("why %q", p.Why)
	}
}

// freePorts are n distinct loopback UDP ports nothing listens on: ones the
// kernel just gave out and took back.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ports = append(ports, c.LocalAddr().(*net.UDPAddr).Port)
	}
	return ports
}
