package web

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/gin-gonic/gin"

	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/topology"
)

// The compact API's answers are derived from a matrix the backend never
// mutates, so each is computed and compressed once per matrix and kept
// while that matrix is among the few most recently asked for: a running
// sweep produces a new matrix per committed round, and the UI asks for the
// same layer from every open browser.
const (
	maxViews        = 4
	maxBlobsPerView = 24
)

type viewCache struct {
	limit int // entries kept; 0 means maxViews
	// topo is the topology a sweep's node order comes from (nil: none).
	topo    func(id string) *topology.Topology
	mu      sync.Mutex
	entries []*viewEntry // least recently used first
}

type viewEntry struct {
	m    *matrix.Matrix
	topo *topology.Topology
	// build serialises building the view; v is set once a build has
	// completed, so one given up midway is not kept (see view).
	build sync.Mutex
	v     atomic.Pointer[view]

	mu       sync.Mutex
	blobs    map[string]*blob
	keys     []string             // insertion order, for eviction
	building map[string]*building // keys being built, see blob
}

// building serialises the builds of one blob key; waiters counts the
// callers holding or waiting for it, so the last one drops it.
type building struct {
	mu      sync.Mutex
	waiters int
}

// blob is an encoded answer with its gzip form and ETag.
type blob struct {
	raw, gz []byte
	etag    string
}

// entry is the entry of m, sweep id's matrix, made when absent.
func (vc *viewCache) entry(id string, m *matrix.Matrix) *viewEntry {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	for i, e := range vc.entries {
		if e.m == m {
			vc.entries = append(append(vc.entries[:i:i], vc.entries[i+1:]...), e)
			return e
		}
	}
	e := &viewEntry{m: m, blobs: map[string]*blob{}, building: map[string]*building{}}
	if vc.topo != nil {
		e.topo = vc.topo(id)
	}
	if len(vc.entries) >= cmp.Or(vc.limit, maxViews) {
		vc.entries = vc.entries[1:]
	}
	vc.entries = append(vc.entries, e)
	return e
}

// lookup is the entry of m if cached, without touching its recency.
func (vc *viewCache) lookup(m *matrix.Matrix) *viewEntry {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	for _, e := range vc.entries {
		if e.m == m {
			return e
		}
	}
	return nil
}

// view builds the entry's view on first use. Concurrent callers wait for
// the one build rather than each walking millions of cells. A build whose
// ctx ends is dropped and fails with ctx's error; the next caller starts
// afresh under its own ctx.
func (e *viewEntry) view(ctx context.Context) (*view, error) {
	if v := e.v.Load(); v != nil {
		return v, nil
	}
	e.build.Lock()
	defer e.build.Unlock()
	if v := e.v.Load(); v != nil {
		return v, nil
	}
	v, err := newView(ctx, e.m, e.topo)
	if err != nil {
		return nil, err
	}
	e.v.Store(v)
	return v, nil
}

// blob returns the cached answer under key, building it with build when
// absent. A second browser asking for the same key waits for the one build
// instead of encoding it again; other keys, cached or not, do not wait for
// it (a walk of tens of seconds, such as the preparer's p50 layer, must
// not hold up the first paint's cached answers). A failed build, one given
// up included, caches nothing: the next waiter builds afresh.
func (e *viewEntry) blob(key string, build func() ([]byte, error)) (*blob, error) {
	e.mu.Lock()
	if b, ok := e.blobs[key]; ok {
		e.mu.Unlock()
		return b, nil
	}
	k := e.building[key]
	if k == nil {
		k = &building{}
		e.building[key] = k
	}
	k.waiters++
	e.mu.Unlock()

	k.mu.Lock()
	defer func() {
		e.mu.Lock()
		if k.waiters--; k.waiters == 0 {
			delete(e.building, key)
		}
		e.mu.Unlock()
		k.mu.Unlock()
	}()
	e.mu.Lock()
	b, ok := e.blobs[key]
	e.mu.Unlock()
	if ok {
		return b, nil
	}
	raw, err := build()
	if err != nil {
		return nil, err
	}
	b = newBlob(raw)
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.keys) >= maxBlobsPerView {
		delete(e.blobs, e.keys[0])
		e.keys = e.keys[1:]
	}
	e.blobs[key] = b
	e.keys = append(e.keys, key)
	return b, nil
}

func newBlob(raw []byte) *blob {
	sum := sha256.Sum256(raw)
	b := &blob{raw: raw, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
	if len(raw) >= minGzip {
		// Layers of noisy figures compress best with Huffman coding alone,
		// layers with structure (status, a dead HCA's cross) with LZ77;
		// both are fast, so try both and keep the smaller.
		for _, level := range []int{4, gzip.HuffmanOnly} {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, level) // levels are valid
			if _, err := zw.Write(raw); err == nil && zw.Close() == nil && (b.gz == nil || buf.Len() < len(b.gz)) {
				b.gz = buf.Bytes()
			}
		}
	}
	return b
}

// send answers with the blob, 304 when the client holds it already.
func (b *blob) send(c *gin.Context, ctype string) {
	h := c.Writer.Header()
	h.Set("ETag", b.etag)
	h.Add("Vary", "Accept-Encoding")
	if etagMatches(c.GetHeader("If-None-Match"), b.etag) {
		c.Status(http.StatusNotModified)
		return
	}
	body := b.raw
	if b.gz != nil && acceptsGzip(c.GetHeader("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		body = b.gz
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	c.Data(http.StatusOK, ctype, body)
}
