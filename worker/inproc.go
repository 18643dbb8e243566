package worker

import (
	"crypto/tls"
	"net/http"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/member"
)

// Handler is the worker API (the same routes and auth the listener serves),
// for callers that reach workers in-process, such as the scale harness.
func (a *Agent) Handler() http.Handler { return a.srv.Handler }

// Connection bounds. A worker talks to one peer a round (one session batch
// to open, one to close) and meets that peer again only in a retest, so an
// idle connection to a peer is almost never reused: a pool that kept them
// held ~150 descriptors per worker after a 128-node sweep, and a demo ran
// out of its own descriptors and blamed the fabric. The pool keeps the
// open/close pair on one connection and little else; the server side
// closes what clients forget.
const (
	peerIdlePerHost = 1
	peerIdleTotal   = 4
	peerIdleTimeout = 15 * time.Second
	// apiIdleTimeout bounds keep-alive connections on the worker API. The
	// coordinator calls every worker once a round, well within it.
	apiIdleTimeout = 2 * time.Minute
)

func peerTransport(rt http.RoundTripper, tc *tls.Config) http.RoundTripper {
	if rt != nil {
		return rt
	}
	return &http.Transport{MaxIdleConnsPerHost: peerIdlePerHost, MaxIdleConns: peerIdleTotal,
		IdleConnTimeout: peerIdleTimeout, TLSClientConfig: tc}
}

// url is a peer API's URL.
func (a *Agent) url(addr, path string) string { return member.URL(a.opts.ClientTLS != nil, addr, path) }
