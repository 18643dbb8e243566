package scale

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"sync"
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
	// null answers tasks without running them (nullTask).
	null bool
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
	if c.p.worker != nil && c.caller != c.p.worker {
		pprof.SetGoroutineLabels(c.p.worker)
		defer pprof.SetGoroutineLabels(c.caller)
	}
	return c.p.RoundTrip(req)
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
	if p.null {
		if resp, ok := nullTask(req); ok {
			return resp, nil
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result(), nil
}
