package wire

import (
	"io"
	"sync"
)

// Buf is a pooled message buffer. A 1,024-node sweep sends half a million
// tasks and answers; what each one allocates is paid again in garbage
// collection.
type Buf struct{ B []byte }

var bufs = sync.Pool{New: func() any { return &Buf{B: make([]byte, 0, 4096)} }}

// GetBuf takes an empty buffer from the pool.
func GetBuf() *Buf {
	b := bufs.Get().(*Buf)
	b.B = b.B[:0]
	return b
}

// Put hands b back unless it grew past what tasks and answers need, so one
// huge message is not held for the rest of the process. b must not be used
// afterwards.
func (b *Buf) Put() {
	if cap(b.B) <= 64<<10 {
		bufs.Put(b)
	}
}

// Body reads a Buf as a request or response body and hands it back to the
// pool when closed: a transport may still be reading after RoundTrip
// returns, so Close is the first moment it is free. Read and Close hold
// mu, so a Close from another goroutine never frees the buffer under a
// Read, and a second Close frees nothing.
type Body struct {
	mu  sync.Mutex
	buf *Buf // nil once closed
	off int
}

// NewBody is a body reading b, which it owns from now on.
func NewBody(b *Buf) *Body { return &Body{buf: b} }

func (t *Body) Read(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.buf == nil || t.off >= len(t.buf.B) {
		return 0, io.EOF
	}
	n := copy(p, t.buf.B[t.off:])
	t.off += n
	return n, nil
}

func (t *Body) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.buf != nil {
		t.buf.Put()
		t.buf = nil
	}
	return nil
}
