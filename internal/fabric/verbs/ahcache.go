package verbs

import (
	"fmt"
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// ahKey is where a UD address handle points: a GID behind a GRH (RoCE, or
// InfiniBand across subnets) or a LID.
type ahKey struct {
	Global bool
	GID    [16]byte
	LID    uint16
	// Flow is the GRH's flow label: on RoCE the UDP source port comes
	// from it, so each live link flow to a peer has a handle of its own.
	Flow uint32
}

// ahCache keeps one address handle per destination for a probe port's
// sends and answers. Creating one is a system call that, on RoCE, resolves
// the peer's MAC (ARP) and can block for as long as that takes, so
// handles are reused, and a failed creation is remembered for backoff
// instead of being retried on every probe to a dead peer. Handles idle for
// idle are destroyed by sweep: a UD send completes without any answer from
// the peer, so no work request still uses a handle nobody posted to for
// that long. Safe for concurrent use. create runs outside the lock, one
// at a time per destination: a peer whose ARP takes a second delays only
// the probes and answers to that peer, never the poller's answers to
// everyone else (their RTTs would read a second slow), and two callers
// never build the same handle twice.
type ahCache[H comparable] struct {
	create  func(ahKey) (H, error)
	destroy func(H)
	now     func() time.Time
	idle    time.Duration
	backoff time.Duration
	max     int

	mu     sync.Mutex
	m      map[ahKey]*ahEntry[H]
	closed bool
}

type ahEntry[H comparable] struct {
	h    H
	err  error // creation failed; retried after backoff
	used time.Time
	// made is closed once create returned; until then h and err are
	// not set and the entry is neither swept nor destroyed.
	made chan struct{}
}

func (e *ahEntry[H]) pending() bool {
	select {
	case <-e.made:
		return false
	default:
		return true
	}
}

func newAHCache[H comparable](create func(ahKey) (H, error), destroy func(H), now func() time.Time) *ahCache[H] {
	return &ahCache[H]{create: create, destroy: destroy, now: now, idle: 2 * time.Minute, backoff: 5 * time.Second,
		max: 4096, m: map[ahKey]*ahEntry[H]{}}
}

func (c *ahCache[H]) get(k ahKey) (H, error) {
	var zero H
	c.mu.Lock()
	for {
		if c.closed {
			c.mu.Unlock()
			return zero, &probe.Error{Class: probe.ClassInternal, Cause: "probe port closed"}
		}
		e := c.m[k]
		if e == nil {
			break
		}
		if e.pending() {
			c.mu.Unlock()
			<-e.made
			c.mu.Lock()
			continue
		}
		now := c.now()
		if e.err == nil {
			e.used = now
			c.mu.Unlock()
			return e.h, nil
		}
		if now.Sub(e.used) < c.backoff {
			c.mu.Unlock()
			return zero, e.err
		}
		delete(c.m, k)
	}
	now := c.now()
	if len(c.m) >= c.max {
		c.sweepLocked(now)
		if len(c.m) >= c.max {
			c.mu.Unlock()
			return zero, &probe.Error{Class: probe.ClassResource,
				Cause: fmt.Sprintf("%d address handles in use, all within the last %s", c.max, c.idle),
				Fix:   "lower the live plan's fan-out (live.rate_per_hca, live.probes_per_window)"}
		}
	}
	e := &ahEntry[H]{used: now, made: make(chan struct{})}
	c.m[k] = e
	c.mu.Unlock()

	h, err := c.create(k)

	c.mu.Lock()
	defer c.mu.Unlock()
	e.h, e.err, e.used = h, err, c.now()
	close(e.made)
	if c.closed {
		// close ran while this was being made, and left it to us.
		if err == nil {
			c.destroy(h)
		}
		delete(c.m, k)
		return zero, &probe.Error{Class: probe.ClassInternal, Cause: "probe port closed"}
	}
	return h, err
}

// sweep destroys idle handles and forgets old failures.
func (c *ahCache[H]) sweep() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sweepLocked(c.now())
}

func (c *ahCache[H]) sweepLocked(now time.Time) {
	for k, e := range c.m {
		switch {
		case e.pending():
		case e.err != nil && now.Sub(e.used) >= c.backoff:
			delete(c.m, k)
		case e.err == nil && now.Sub(e.used) >= c.idle:
			c.destroy(e.h)
			delete(c.m, k)
		}
	}
}

// close destroys every handle; the port's QP must be quiet by then.
func (c *ahCache[H]) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.m {
		if e.pending() {
			continue // its maker destroys it (get)
		}
		if e.err == nil {
			c.destroy(e.h)
		}
		delete(c.m, k)
	}
	c.closed = true
}

func (c *ahCache[H]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
