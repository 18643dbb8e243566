package lldp

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Reader is an open listener on one interface: a *Conn, or a test's own.
type Reader interface {
	Read(ctx context.Context) (Neighbor, error)
	Close() error
}

// WatchOptions configures a Watcher.
type WatchOptions struct {
	// Open starts listening on an interface. Nil: Open, an AF_PACKET
	// socket in the network namespace of whichever thread runs it, which
	// for a Go program is the process's.
	Open func(ifname string) (Reader, error)
	// Now is the clock that ages neighbours; nil: time.Now.
	Now func() time.Time
}

// Watcher listens on interfaces in the background, one goroutine each,
// started the first time an interface is asked about, and keeps what each
// has heard. Its owner stops them all with Close.
type Watcher struct {
	open func(string) (Reader, error)
	now  func() time.Time

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	ifs    map[string]*listening
	closed bool
}

// listening is one interface's listener and what it heard.
type listening struct {
	since     time.Time
	heard     map[string]Neighbor // by msap: a port may hear more than one agent
	gone      *ExpiredError       // the last neighbour that expired or shut down
	malformed *MalformedError
	err       error         // the listener could not open, or stopped, on this
	opened    bool          // it opened: err, if any, came from a read
	ready     chan struct{} // closed at the first neighbour or at err
	readyOnce sync.Once
}

// NewWatcher returns a Watcher that listens on nothing yet.
func NewWatcher(o WatchOptions) *Watcher {
	w := &Watcher{open: o.Open, now: o.Now, ifs: map[string]*listening{}}
	if w.open == nil {
		w.open = func(ifname string) (Reader, error) {
			c, err := Open(ifname)
			if err != nil {
				return nil, err
			}
			return c, nil
		}
	}
	if w.now == nil {
		w.now = time.Now
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	return w
}

// Neighbor is what ifname has heard: its one current neighbour, or why
// there is none (*NotHeardError with the time listening began,
// *ExpiredError, *AmbiguousError, or why the listener could not open or
// stopped, such as a *PermissionError). The first question about an
// interface starts listening on it. A listener that could not open is
// tried again at every question, so the answer stays the same while the
// cause does; one that stopped on a read error reports it once and starts
// over.
func (w *Watcher) Neighbor(ifname string) (Neighbor, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return Neighbor{}, ErrClosed
	}
	l := w.ifs[ifname]
	switch {
	case l == nil, l.err != nil && !l.opened:
		l = w.start(ifname)
	case l.err != nil:
		err := l.err
		w.start(ifname)
		return Neighbor{}, err
	}
	if l.err != nil {
		return Neighbor{}, l.err
	}
	w.expire(l)
	ns := make([]Neighbor, 0, len(l.heard))
	for _, n := range l.heard {
		ns = append(ns, n)
	}
	if len(ns) == 0 && l.gone != nil {
		return Neighbor{}, l.gone
	}
	n, err := One(ifname, ns)
	var nh *NotHeardError
	if errors.As(err, &nh) {
		nh.Since, nh.Source, nh.Malformed = l.since, SourceFrame, l.malformed
	}
	return n, err
}

// Wait starts listening on ifnames and returns once each has heard a
// neighbour or failed, or when ctx ends (the caller's bound on the wait).
func (w *Watcher) Wait(ctx context.Context, ifnames ...string) {
	var ready []chan struct{}
	w.mu.Lock()
	for _, ifname := range ifnames {
		if w.closed {
			break
		}
		l := w.ifs[ifname]
		if l == nil {
			l = w.start(ifname)
		}
		ready = append(ready, l.ready)
	}
	w.mu.Unlock()
	for _, r := range ready {
		select {
		case <-r:
		case <-ctx.Done():
			return
		case <-w.ctx.Done():
			return
		}
	}
}

// Close stops every listener and waits for them to end.
func (w *Watcher) Close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.cancel()
	w.wg.Wait()
}

// start opens a listener on ifname and reads it in the background; w.mu is
// held. Opening here, not in the goroutine, gives the question that starts
// it an answer that already says whether it could.
func (w *Watcher) start(ifname string) *listening {
	l := &listening{since: w.now(), heard: map[string]Neighbor{}, ready: make(chan struct{})}
	w.ifs[ifname] = l
	r, err := w.open(ifname)
	if err != nil {
		l.err = err
		close(l.ready)
		return l
	}
	l.opened = true
	w.wg.Add(1)
	go w.listen(l, r)
	return l
}

func (w *Watcher) listen(l *listening, r Reader) {
	defer w.wg.Done()
	defer r.Close()
	for {
		n, err := r.Read(w.ctx)
		if w.ctx.Err() != nil {
			return
		}
		var bad *MalformedError
		switch {
		case errors.As(err, &bad):
			w.mu.Lock()
			l.malformed = bad
			w.mu.Unlock()
		case err != nil:
			w.fail(l, err)
			return
		default:
			w.heard(l, n)
		}
	}
}

func (w *Watcher) fail(l *listening, err error) {
	w.mu.Lock()
	l.err = err
	w.mu.Unlock()
	l.readyOnce.Do(func() { close(l.ready) })
}

// heard records an announcement: the newest from each agent is kept, and
// a TTL of 0 removes the agent at once (802.1AB's shutdown LLDPDU).
func (w *Watcher) heard(l *listening, n Neighbor) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n.TTL == 0 {
		if _, ok := l.heard[n.msap()]; ok {
			delete(l.heard, n.msap())
			l.gone = &ExpiredError{Last: n, Shutdown: true}
		}
		return
	}
	l.heard[n.msap()] = n
	l.readyOnce.Do(func() { close(l.ready) })
}

// expire drops the neighbours whose TTL has run out; w.mu is held.
func (w *Watcher) expire(l *listening) {
	now := w.now()
	for k, n := range l.heard {
		if now.After(n.Seen.Add(n.TTL)) {
			delete(l.heard, k)
			l.gone = &ExpiredError{Last: n}
		}
	}
}
