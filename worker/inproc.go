package worker

import "net/http"

// Handler is the worker API (the same routes and auth the listener serves),
// for callers that reach workers in-process, such as the scale harness.
func (a *Agent) Handler() http.Handler { return a.srv.Handler }

func peerTransport(rt http.RoundTripper) http.RoundTripper {
	if rt != nil {
		return rt
	}
	return &http.Transport{MaxIdleConnsPerHost: 16}
}
