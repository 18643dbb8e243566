package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
)

// table owns the responder halves a Server is serving.
type table struct {
	mu   sync.Mutex
	m    map[string]*responder
	wg   sync.WaitGroup
	done bool
}

type responder struct {
	cancel context.CancelFunc
	ended  chan struct{}
}

func newTable() *table { return &table{m: map[string]*responder{}} }

func (t *table) add(id string, r *responder) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return false
	}
	t.m[id] = r
	t.wg.Add(1)
	return true
}

func (t *table) remove(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.m[id]; ok {
		delete(t.m, id)
		t.wg.Done()
	}
}

// close ends one session and waits until its QP is torn down, so the
// initiator's next test never races a half-closed responder.
func (t *table) close(id string) bool {
	t.mu.Lock()
	r, ok := t.m[id]
	t.mu.Unlock()
	if !ok {
		return false
	}
	r.cancel()
	<-r.ended
	return true
}

func (t *table) closeAll() {
	t.mu.Lock()
	t.done = true
	for _, r := range t.m {
		r.cancel()
	}
	t.mu.Unlock()
	t.wg.Wait()
}

func (t *table) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
