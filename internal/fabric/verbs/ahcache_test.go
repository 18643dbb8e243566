package verbs

import (
	"errors"
	"sync"
	"testing"
	"time"
)

type fakeAHs struct {
	next    int
	live    map[int]bool
	creates int
	fail    map[ahKey]bool
}

func (f *fakeAHs) create(k ahKey) (int, error) {
	f.creates++
	if f.fail[k] {
		return 0, errors.New("no ARP answer")
	}
	f.next++
	f.live[f.next] = true
	return f.next, nil
}

func (f *fakeAHs) destroy(h int) {
	if !f.live[h] {
		panic("destroyed twice or never created")
	}
	delete(f.live, h)
}

func TestAHCacheReusesExpiresAndBacksOff(t *testing.T) {
	now := time.Unix(1000, 0)
	f := &fakeAHs{live: map[int]bool{}, fail: map[ahKey]bool{}}
	c := newAHCache(f.create, f.destroy, func() time.Time { return now })
	a, b := ahKey{Global: true, GID: [16]byte{15: 1}}, ahKey{LID: 7}
	h1, _ := c.get(a)
	h2, _ := c.get(a)
	if h1 != h2 || f.creates != 1 {
		t.Fatalf("a second get created again: %d, %d, %d creates", h1, h2, f.creates)
	}
	// A peer whose address does not resolve is not retried on every
	// probe, only after the backoff.
	f.fail[b] = true
	for range 10 {
		if _, err := c.get(b); err == nil {
			t.Fatal("failing create succeeded")
		}
	}
	if f.creates != 2 {
		t.Fatalf("%d creates, want the failure remembered", f.creates)
	}
	now = now.Add(c.backoff)
	f.fail[b] = false
	if _, err := c.get(b); err != nil || f.creates != 3 {
		t.Fatalf("after the backoff: %v, %d creates", err, f.creates)
	}
	// Idle handles go; used ones stay.
	now = now.Add(c.idle - time.Second)
	if _, err := c.get(b); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Second)
	c.sweep()
	if c.len() != 1 || len(f.live) != 1 {
		t.Fatalf("after sweep: %d cached, %d live; want only b's", c.len(), len(f.live))
	}
	c.close()
	if len(f.live) != 0 {
		t.Fatalf("close left %d handles", len(f.live))
	}
	if _, err := c.get(a); err == nil {
		t.Fatal("get after close succeeded")
	}
}

func TestAHCacheBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	f := &fakeAHs{live: map[int]bool{}, fail: map[ahKey]bool{}}
	c := newAHCache(f.create, f.destroy, func() time.Time { return now })
	c.max = 3
	for i := range 3 {
		if _, err := c.get(ahKey{LID: uint16(i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.get(ahKey{LID: 9}); err == nil {
		t.Fatal("a fourth handle while all three are in use")
	}
	now = now.Add(c.idle)
	if _, err := c.get(ahKey{LID: 9}); err != nil || c.len() != 1 {
		t.Fatalf("idle handles not made room: %v, %d cached", err, c.len())
	}
}

// slowAHs blocks creating a handle for gated keys until the gate opens,
// as a RoCE create_ah does while the peer's ARP goes unanswered.
type slowAHs struct {
	mu      sync.Mutex
	gate    map[ahKey]chan struct{}
	started chan ahKey
	creates map[ahKey]int
	live    map[int]bool
	next    int
}

func (f *slowAHs) create(k ahKey) (int, error) {
	f.mu.Lock()
	f.creates[k]++
	g := f.gate[k]
	f.mu.Unlock()
	if g != nil {
		f.started <- k
		<-g
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	f.live[f.next] = true
	return f.next, nil
}

func (f *slowAHs) destroy(h int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.live, h)
}

func TestAHCacheSlowPeerBlocksOnlyItself(t *testing.T) {
	slow, fast := ahKey{LID: 1}, ahKey{LID: 2}
	f := &slowAHs{gate: map[ahKey]chan struct{}{slow: make(chan struct{})}, started: make(chan ahKey, 1),
		creates: map[ahKey]int{}, live: map[int]bool{}}
	c := newAHCache(f.create, f.destroy, time.Now)
	got := make(chan int, 2)
	for range 2 { // two callers for the slow peer: one creates, one waits
		go func() {
			h, err := c.get(slow)
			if err != nil {
				h = -1
			}
			got <- h
		}()
	}
	<-f.started
	if _, err := c.get(fast); err != nil { // must not wait for the slow peer
		t.Fatal(err)
	}
	close(f.gate[slow])
	a, b := <-got, <-got
	if a != b || a < 0 || f.creates[slow] != 1 {
		t.Fatalf("slow peer: handles %d and %d after %d creates, want one shared handle", a, b, f.creates[slow])
	}
}

func TestAHCacheCloseWhileCreating(t *testing.T) {
	k := ahKey{LID: 1}
	f := &slowAHs{gate: map[ahKey]chan struct{}{k: make(chan struct{})}, started: make(chan ahKey, 1),
		creates: map[ahKey]int{}, live: map[int]bool{}}
	c := newAHCache(f.create, f.destroy, time.Now)
	errc := make(chan error, 1)
	go func() { _, err := c.get(k); errc <- err }()
	<-f.started
	c.close()
	close(f.gate[k])
	if err := <-errc; err == nil {
		t.Fatal("a handle made after close was handed out")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.live) != 0 {
		t.Fatalf("%d handles outlived close", len(f.live))
	}
}
