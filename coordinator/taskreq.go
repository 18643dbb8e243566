package coordinator

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// The leader sends half a million tasks in a 1,024-node sweep; what each
// one allocates is paid again in garbage collection. Bodies and answers
// are pooled wire.Bufs, and the constant header values are shared (a
// RoundTripper must not modify a request).
var wireTypeHdr = []string{wire.ContentType}

// taskRequest builds the POST of t to a worker. Its URL is parsed once per
// worker and its header built once per token (taskTemplate): both are the
// same for every task, and transports only read them.
func (c *Coordinator) taskRequest(ctx context.Context, apiAddr string, t wire.Task) (*http.Request, error) {
	u, hdr, err := c.taskTemplate(apiAddr)
	if err != nil {
		return nil, err
	}
	buf := wire.GetBuf()
	buf.B = wire.TaskMsg.Append(buf.B, &t)
	body := wire.NewBody(buf)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "", body)
	if err != nil {
		body.Close()
		return nil, err
	}
	req.URL, req.Host, req.Header = u, u.Host, hdr
	// NewRequest sizes only the bodies it knows. Without GetBody a POST is
	// still retried on a fresh connection when none of it was written, the
	// only case net/http retries one in anyway.
	req.ContentLength = int64(len(buf.B))
	return req, nil
}

// taskTemplate is what every task request to apiAddr shares: its parsed
// URL and its header (content type, bearer token).
func (c *Coordinator) taskTemplate(apiAddr string) (*url.URL, http.Header, error) {
	tls := c.opts.ClientTLS != nil
	uk := taskURLKey{tls, apiAddr}
	v, ok := taskURLs.Load(uk)
	if !ok {
		u, err := url.Parse(c.url(apiAddr, "/v1/tasks"))
		if err != nil {
			return nil, nil, err
		}
		v, _ = taskURLs.LoadOrStore(uk, u)
	}
	h, ok := taskHeaders.Load(c.opts.Token)
	if !ok {
		hdr := http.Header{"Content-Type": wireTypeHdr}
		if c.opts.Token != "" {
			hdr.Set("Authorization", "Bearer "+c.opts.Token)
		}
		h, _ = taskHeaders.LoadOrStore(c.opts.Token, hdr)
	}
	return v.(*url.URL), h.(http.Header), nil
}

type taskURLKey struct {
	tls  bool
	addr string
}

// One entry per worker address and per token the process has used; the
// values are never modified once stored.
var taskURLs, taskHeaders sync.Map

// readAnswer reads a response body (at most 16 MB) into a pooled buffer
// the caller puts back.
func readAnswer(resp *http.Response) (*wire.Buf, error) {
	a := wire.GetBuf()
	buf := bytes.NewBuffer(a.B)
	if n := resp.ContentLength; n > 0 && n <= maxAnswer {
		buf.Grow(int(n))
	}
	_, err := buf.ReadFrom(io.LimitReader(resp.Body, maxAnswer))
	a.B = buf.Bytes()
	if err != nil {
		a.Put()
		return nil, err
	}
	return a, nil
}

const maxAnswer = 16 << 20
