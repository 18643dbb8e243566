package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// sessionTable owns the responder halves of tests this worker is serving.
// Each entry has one goroutine running Respond; close or the test timeout
// ends it, and closeAll waits for all of them.
type sessionTable struct {
	mu   sync.Mutex
	m    map[string]*responder
	wg   sync.WaitGroup
	done bool
}

type responder struct {
	cancel context.CancelFunc
	ended  chan struct{}
}

func newSessionTable() *sessionTable { return &sessionTable{m: map[string]*responder{}} }

func (a *Agent) openResponder(ctx context.Context, req probe.SessionRequest) (probe.SessionReply, error) {
	observe := func(err error) {
		if a.opts.OnSession != nil {
			a.opts.OnSession(err)
		}
	}
	sess, err := a.opts.Fabric.Open(ctx, req.Local, req.Params)
	if err != nil {
		observe(err)
		return probe.SessionReply{}, err
	}
	info := sess.Info()
	var accept func(context.Context) error // RDMA CM: the connection completes after our reply
	if req.Params.Connect == probe.ConnectRDMACM {
		info, accept, err = listenCM(ctx, sess, req)
	} else {
		err = sess.Connect(ctx, req.Initiator)
	}
	if err != nil {
		_ = sess.Close()
		observe(err)
		return probe.SessionReply{}, err
	}
	a.served.add(req.Params.Connect)
	id := newID()
	// The responder outlives the HTTP request that opened it, so it runs
	// under its own deadline, not the request's context.
	rctx, cancel := context.WithTimeout(context.Background(), req.Params.Timeout*2)
	r := &responder{cancel: cancel, ended: make(chan struct{})}
	if !a.sessions.add(id, r) {
		cancel()
		_ = sess.Close()
		return probe.SessionReply{}, &probe.Error{Class: probe.ClassPeerLost, Cause: "worker is shutting down"}
	}
	go func() {
		defer a.sessions.remove(id)
		defer close(r.ended)
		defer cancel()
		defer sess.Close()
		var err error
		if accept != nil {
			err = accept(rctx)
		}
		if err == nil {
			err = sess.Respond(rctx, req.Params)
		}
		if err != nil && rctx.Err() == nil {
			a.log.Debug("responder ended with error", "session", id, "err", err)
		} else {
			err = nil // the initiator closed the session: served normally
		}
		observe(err)
		if keepResponderQP(err) {
			<-rctx.Done() // keep the QP alive until the initiator is done with it
		}
	}()
	return probe.SessionReply{Version: probe.Version, SessionID: id, Responder: info}, nil
}

func (t *sessionTable) add(id string, r *responder) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return false
	}
	t.m[id] = r
	t.wg.Add(1)
	return true
}

func (t *sessionTable) remove(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.m[id]; ok {
		delete(t.m, id)
		t.wg.Done()
	}
}

// close ends one session and waits until its QP is torn down, so the
// initiator's next test never races a half-closed responder.
func (t *sessionTable) close(id string) bool {
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

func (t *sessionTable) closeAll() {
	t.mu.Lock()
	t.done = true
	for _, r := range t.m {
		r.cancel()
	}
	t.mu.Unlock()
	t.wg.Wait()
}

func (t *sessionTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
