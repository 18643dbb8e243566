package scale

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"sync"
	"sync/atomic"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// inproc is an http.RoundTripper that hands each request straight to the
// addressed worker's http.Handler: the same routes, auth and JSON as over
// TCP, without sockets. 1,024 workers x 1,023 rounds is a million task calls
// plus two session calls per rail; over loopback TCP the kernel and the HTTP
// framing alone would eat most of this 2-core machine.
type inproc struct {
	mu sync.RWMutex
	h  map[string]http.Handler // API address → handler
	// alias is h by the callers' own copies of the addresses (the
	// coordinator keeps one URL per worker), which compare by pointer: a
	// lookup in h compared the bytes of the worker's copy, a cache miss a
	// task (4.7 of 280 CPU-s at 4,096 nodes, counted as the coordinator's).
	alias map[string]http.Handler
	// null answers tasks without running them (nullTask), and task
	// streams in memory (nullStream); streams counts those opened.
	null    bool
	streams atomic.Int64
	// bearer is the workers' Authorization header ("" when they have no
	// token): the stand-ins let in only what carries it, as a worker
	// does, and leave the rest to the worker's own handler, which
	// refuses it.
	bearer string
	// worker is the pprof label context handlers run under, so a CPU
	// profile tells the workers' share from the coordinator's.
	worker context.Context
}

// from is the transport for one kind of caller: handlers run under the
// worker labels and the caller's goroutine gets its own back afterwards
// (pprof has no way to read a goroutine's current labels).
func (p *inproc) from(caller context.Context) http.RoundTripper { return &inprocClient{p, caller} }

type inprocClient struct {
	p      *inproc
	caller context.Context
}

func (c *inprocClient) RoundTrip(req *http.Request) (*http.Response, error) {
	if resp := c.p.openStream(req, c.labels); resp != nil {
		if _, ok := c.p.handler(req.URL.Host); !ok {
			return nil, fmt.Errorf("dial tcp %s: connection refused (no in-process worker there)", req.URL.Host)
		}
		c.p.streams.Add(1)
		return resp, nil
	}
	defer c.labels()()
	return c.p.RoundTrip(req)
}

// labels puts the goroutine under the workers' labels until the returned
// func puts the caller's back.
func (c *inprocClient) labels() func() {
	if c.p.worker == nil || c.caller == c.p.worker {
		return func() {}
	}
	pprof.SetGoroutineLabels(c.p.worker)
	return func() { pprof.SetGoroutineLabels(c.caller) }
}

func newInproc() *inproc {
	return &inproc{h: map[string]http.Handler{}, alias: map[string]http.Handler{}}
}

func (p *inproc) add(addr string, h http.Handler) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.h[addr] = h
	delete(p.alias, addr)
}

func (p *inproc) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.h)
	clear(p.alias)
}

// handler is the handler at addr, found by the caller's copy of it.
func (p *inproc) handler(addr string) (http.Handler, bool) {
	p.mu.RLock()
	h, ok := p.alias[addr]
	p.mu.RUnlock()
	if ok {
		return h, true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if h, ok = p.h[addr]; ok {
		p.alias[addr] = h
	}
	return h, ok
}

func (p *inproc) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	h, ok := p.handler(req.URL.Host)
	if !ok {
		return nil, fmt.Errorf("dial tcp %s: connection refused (no in-process worker there)", req.URL.Host)
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	if p.null && p.authorized(req) {
		if resp, ok := nullTask(req); ok {
			return resp, nil
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result(), nil
}

// TaskStreams tells the coordinator that tasks may go over task streams
// here: in control mode the stand-ins answer them in memory (nullStream),
// so the coordinator runs the path it runs on a real network, less the
// kernel's share. Full mode's workers need a connection to take over.
func (c *inprocClient) TaskStreams() bool { return c.p.null }

// openStream answers a task stream's opening in control mode with a
// stream the stand-in answers in memory; nil when req is not one.
func (p *inproc) openStream(req *http.Request, labels func() func()) *http.Response {
	if !p.null || req.URL.Path != wire.StreamPath || req.Header.Get("Upgrade") != wire.StreamProto || !p.authorized(req) {
		return nil
	}
	return &http.Response{Status: "101 Switching Protocols", StatusCode: http.StatusSwitchingProtocols, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Upgrade": {wire.StreamProto}, "Connection": {"Upgrade"}}, Body: &nullStream{labels: labels}, Request: req}
}

// authorized says whether req carries the workers' token (any request
// does when they have none).
func (p *inproc) authorized(req *http.Request) bool {
	return p.bearer == "" || req.Header.Get("Authorization") == p.bearer
}

// nullStream is a task stream whose far end is the stand-in: a written
// task frame is answered at once (NullAppend), and the answer waits to be
// read. A stream carries one task at a time, so one answer is all it holds.
type nullStream struct {
	mu     sync.Mutex
	out    []byte // the answer not yet read
	off    int
	closed bool
	// labels switches the goroutine to the workers' pprof labels and
	// returns what switches it back.
	labels func() func()
}

func (s *nullStream) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, net.ErrClosed
	}
	kind, seq, task, whole := wire.SplitFrame(b)
	if !whole || kind != wire.FrameTask {
		return 0, errors.New("null stream: one whole task frame a write")
	}
	back := s.labels()
	out, ok := NullAppend(task, wire.BeginFrame(s.out[:0]), true)
	back()
	kind = wire.FrameResult
	if !ok {
		out, kind = wire.ErrorMsg.Append(out[:wire.FrameHead], &probe.Error{Class: probe.ClassInternal, Cause: "decode request: bad task"}), wire.FrameError
	}
	wire.EndFrame(out, kind, seq)
	s.out, s.off = out, 0
	return len(b), nil
}

func (s *nullStream) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, net.ErrClosed
	}
	if s.off >= len(s.out) {
		return 0, io.EOF // nothing was asked: a real stream would block
	}
	n := copy(p, s.out[s.off:])
	s.off += n
	return n, nil
}

func (s *nullStream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}
