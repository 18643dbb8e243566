package coordinator

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// The leader sends half a million tasks in a 1,024-node sweep; what each
// one allocates is paid again in garbage collection. Bodies and answers
// are pooled wire.Bufs, and the constant header values are shared (a
// RoundTripper must not modify a request).
var wireTypeHdr = []string{wire.ContentType}

// taskRequest builds the POST of t to a worker. Its URL and header are
// built once per worker (taskTarget): both are the same for every task,
// and transports only read them. The request is filled in directly, as
// http.NewRequest would parse a URL and make a header only for us to
// replace them, a million times a sweep.
func (c *Coordinator) taskRequest(ctx context.Context, tt *taskTarget, t *wire.Task, enc *wire.TaskEncoder) *http.Request {
	buf := wire.GetBuf()
	buf.B = enc.Append(buf.B, t)
	n := len(buf.B)
	var body io.ReadCloser = wire.NewBody(buf)
	if _, tcp := c.client.Transport.(*http.Transport); tcp {
		// net/http's Transport writes a request's headers on their own, a
		// syscall and a packet apart from the body, unless it can tell the
		// body is in memory (a *bytes.Reader it can): over loopback the
		// split cost 8-17% of a control sweep's CPU. It may also still hold the
		// body once the answer is in, and an io.NopCloser says nothing of
		// when it is done, so these bytes are the request's own.
		body = io.NopCloser(bytes.NewReader(bytes.Clone(buf.B)))
		buf.Put()
	}
	// Without GetBody a POST is still retried on a fresh connection when
	// none of it was written, the only case net/http retries one in anyway.
	req := http.Request{Method: http.MethodPost, URL: tt.url, Host: tt.url.Host, Header: tt.hdr,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Body: body, ContentLength: int64(n)}
	return req.WithContext(ctx)
}

// taskTarget is what every task request to one worker shares: its parsed
// URL and its header (content type, bearer token). A coordinator's scheme
// and token are fixed, so the worker's address is the key.
type taskTarget struct {
	addr string
	url  *url.URL
	hdr  http.Header
	// The worker's task streams (stream.go): where they open, with what
	// header (the token, the upgrade: wire.StreamProto, or for a worker of
	// the previous version wire.StreamProtoFloats), and the ones kept.
	streamURL       *url.URL
	streamHdr       http.Header
	streamHdrFloats http.Header
	streams         taskStreams
}

func (c *Coordinator) taskTarget(apiAddr string) (*taskTarget, error) {
	c.targets.mu.RLock()
	tt := c.targets.m[apiAddr]
	c.targets.mu.RUnlock()
	if tt != nil {
		return tt, nil
	}
	u, err := url.Parse(c.url(apiAddr, "/v1/tasks"))
	if err != nil {
		return nil, err
	}
	su := *u
	su.Path = wire.StreamPath
	hdr, shdr := http.Header{"Content-Type": wireTypeHdr}, http.Header{}
	c.authorizeHeader(hdr)
	c.authorizeHeader(shdr)
	wire.UpgradeHeader(shdr)
	fhdr := shdr.Clone()
	fhdr.Set("Upgrade", wire.StreamProtoFloats)
	c.targets.mu.Lock()
	defer c.targets.mu.Unlock()
	if c.targets.m == nil {
		c.targets.m = map[string]*taskTarget{}
	}
	if tt = c.targets.m[apiAddr]; tt == nil {
		tt = &taskTarget{addr: apiAddr, url: u, hdr: hdr, streamURL: &su, streamHdr: shdr, streamHdrFloats: fhdr}
		c.targets.m[apiAddr] = tt
	}
	return tt, nil
}

// cachedTarget is the task target of apiAddr, kept in slot (the worker's
// registry entry, which a task reads anyway) so that a task need not look
// it up by address; nil when it cannot be built (postTaskIn says why).
func (c *Coordinator) cachedTarget(slot *atomic.Pointer[taskTarget], apiAddr string) *taskTarget {
	if slot == nil {
		return nil
	}
	if tt := slot.Load(); tt != nil && tt.addr == apiAddr {
		return tt
	}
	tt, err := c.taskTarget(apiAddr)
	if err != nil {
		return nil
	}
	slot.Store(tt)
	return tt
}

// taskTargets holds a taskTarget per worker address this coordinator has
// sent a task to. A plain map: sync.Map's lookup (interface hashing, a
// trie walk) cost more than building the request it saves.
type taskTargets struct {
	mu sync.RWMutex
	m  map[string]*taskTarget
}

// maxAnswer bounds a worker's answer to a task.
const maxAnswer = 16 << 20
