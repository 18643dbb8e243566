package member

import (
	"net"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// Liveness answers whether a worker's process is up when its API could not
// be dialled: gossip runs in the same process as the API, so a member that
// answers a gossip ping is alive and only its API port is out of reach (a
// firewall, a wrong advertised address), while one that does not has
// died, though gossip may not have noticed yet (that takes a few probe
// rounds, and a sweep's tasks to a just-killed worker come at once).
type Liveness struct {
	ml  *memberlist.Memberlist
	ttl time.Duration

	mu      sync.Mutex
	answers map[string]*liveAnswer
}

// liveAnswer is one node's cached answer; done is closed once ok is known,
// so callers asking while a ping is out wait for it instead of pinging.
type liveAnswer struct {
	done  chan struct{}
	ok    bool
	until time.Time
}

// livenessTTL: a dead worker's tasks fail one after another; one ping
// answers them all, and gossip declares it dead within this anyway.
const livenessTTL = 10 * time.Second

// NewLiveness asks through ml; nil answers false (no gossip, no proof).
func NewLiveness(ml *memberlist.Memberlist) *Liveness {
	return &Liveness{ml: ml, ttl: livenessTTL, answers: map[string]*liveAnswer{}}
}

// Answers says whether node is alive in gossip and answers a ping now
// (or did within the last ten seconds).
func (l *Liveness) Answers(node string) bool {
	if l == nil || l.ml == nil {
		return false
	}
	var addr net.Addr
	for _, m := range l.ml.Members() {
		if m.Name == node && m.State == memberlist.StateAlive {
			addr = &net.TCPAddr{IP: m.Addr, Port: int(m.Port)}
		}
	}
	if addr == nil {
		return false
	}
	l.mu.Lock()
	a := l.answers[node]
	if a != nil && (a.until.IsZero() || time.Now().Before(a.until)) {
		l.mu.Unlock()
		<-a.done
		return a.ok
	}
	a = &liveAnswer{done: make(chan struct{})}
	l.answers[node] = a
	l.mu.Unlock()
	_, err := l.ml.Ping(node, addr)
	l.mu.Lock()
	a.ok, a.until = err == nil, time.Now().Add(l.ttl)
	l.mu.Unlock()
	close(a.done)
	return a.ok
}
