package worker

import (
	"crypto/tls"
	"net/http"

	"github.com/rdmamesh/rdmamesh/internal/member"
)

// Handler is the worker API (the same routes and auth the listener serves),
// for callers that reach workers in-process, such as the scale harness.
func (a *Agent) Handler() http.Handler { return a.srv.Handler }

func peerTransport(rt http.RoundTripper, tc *tls.Config) http.RoundTripper {
	if rt != nil {
		return rt
	}
	return &http.Transport{MaxIdleConnsPerHost: 16, TLSClientConfig: tc}
}

// url is a peer API's URL.
func (a *Agent) url(addr, path string) string { return member.URL(a.opts.ClientTLS != nil, addr, path) }
