package coordinator

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"

	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// The leader sends a million tasks in a 1,024-node sweep; what each one
// allocates is paid again in garbage collection. The buffers below are
// pooled, and the constant header values are shared (a RoundTripper must
// not modify a request).
var wireTypeHdr = []string{wire.ContentType}

// taskBody reads a task's encoded form and hands the buffer back to its
// pool when the transport closes it: the transport may still be reading
// after RoundTrip returns, so that is the first moment it is free. Read and
// Close hold mu, so a Close from another goroutine never frees the buffer
// under a Read; the reader itself is never reused, so a second Close cannot
// free a buffer another task already took.
type taskBody struct {
	mu  sync.Mutex
	buf *taskBuf // nil once closed
	off int
}

type taskBuf struct{ b []byte }

var taskBufs = sync.Pool{New: func() any { return &taskBuf{b: make([]byte, 0, 1024)} }}

func (t *taskBody) Read(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.buf == nil || t.off >= len(t.buf.b) {
		return 0, io.EOF
	}
	n := copy(p, t.buf.b[t.off:])
	t.off += n
	return n, nil
}

func (t *taskBody) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.buf != nil {
		putBuf(&taskBufs, t.buf, t.buf.b)
		t.buf = nil
	}
	return nil
}

// putBuf pools a buffer unless it grew past what tasks and answers need,
// so one huge answer is not held for the rest of the process.
func putBuf[T any](p *sync.Pool, v *T, b []byte) {
	if cap(b) <= 64<<10 {
		p.Put(v)
	}
}

// taskRequest builds the POST of t to a worker.
func (c *Coordinator) taskRequest(ctx context.Context, apiAddr string, t wire.Task) (*http.Request, error) {
	buf := taskBufs.Get().(*taskBuf)
	buf.b = wire.TaskMsg.Append(buf.b[:0], &t)
	body := &taskBody{buf: buf}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url(apiAddr, "/v1/tasks"), body)
	if err != nil {
		body.Close()
		return nil, err
	}
	// NewRequest sizes only the bodies it knows. Without GetBody a POST is
	// still retried on a fresh connection when none of it was written, the
	// only case net/http retries one in anyway.
	req.ContentLength = int64(len(buf.b))
	req.Header["Content-Type"] = wireTypeHdr
	c.authorize(req)
	return req, nil
}

// answer is a pooled buffer holding a worker's answer.
type answer struct{ b []byte }

var answerBufs = sync.Pool{New: func() any { return &answer{b: make([]byte, 0, 2048)} }}

func (a *answer) put() { putBuf(&answerBufs, a, a.b) }

// readAnswer reads a response body (at most 16 MB) into a pooled buffer
// the caller puts back.
func readAnswer(resp *http.Response) (*answer, error) {
	a := answerBufs.Get().(*answer)
	buf := bytes.NewBuffer(a.b[:0])
	if n := resp.ContentLength; n > 0 && n <= maxAnswer {
		buf.Grow(int(n))
	}
	_, err := buf.ReadFrom(io.LimitReader(resp.Body, maxAnswer))
	a.b = buf.Bytes()
	if err != nil {
		a.put()
		return nil, err
	}
	return a, nil
}

const maxAnswer = 16 << 20
