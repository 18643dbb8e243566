package lldp

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
)

// feed is a Reader a test hands announcements to, one Read each.
type feed struct {
	in     chan result
	closed atomic.Bool
}

type result struct {
	n   Neighbor
	err error
}

func (f *feed) Read(ctx context.Context) (Neighbor, error) {
	select {
	case r := <-f.in:
		return r.n, r.err
	case <-ctx.Done():
		return Neighbor{}, ctx.Err()
	}
}

func (f *feed) Close() error {
	f.closed.Store(true)
	return nil
}

// feeds opens a feed per interface and remembers them, with a clock the
// test moves.
type feeds struct {
	mu    sync.Mutex
	by    map[string]*feed
	opens map[string]int
	fail  map[string]error
	now   time.Time
}

func newFeeds() *feeds {
	return &feeds{by: map[string]*feed{}, opens: map[string]int{}, fail: map[string]error{}, now: time.Unix(1_800_000_000, 0)}
}

func (fs *feeds) open(ifname string) (Reader, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.opens[ifname]++
	if err := fs.fail[ifname]; err != nil {
		return nil, err
	}
	f := &feed{in: make(chan result)}
	fs.by[ifname] = f
	return f, nil
}

func (fs *feeds) clock() time.Time {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.now
}

func (fs *feeds) advance(d time.Duration) {
	fs.mu.Lock()
	fs.now = fs.now.Add(d)
	fs.mu.Unlock()
}

// send hands ifname's listener one result, waiting for it to be listening.
func (fs *feeds) send(t *testing.T, ifname string, r result) {
	t.Helper()
	var f *feed
	wait.For(t, "a listener on "+ifname, func() bool {
		fs.mu.Lock()
		defer fs.mu.Unlock()
		f = fs.by[ifname]
		return f != nil
	})
	select {
	case f.in <- r:
	case <-time.After(10 * time.Second):
		t.Fatalf("the listener on %s did not read", ifname)
	}
}

func (fs *feeds) neighbor(name, port string, ttl time.Duration) Neighbor {
	return Neighbor{ChassisID: "52:54:00:00:00:" + port[len(port)-2:], ChassisIDType: TypeMAC, PortID: port, PortIDType: TypeInterfaceName,
		SystemName: name, TTL: ttl, Source: SourceFrame, Seen: fs.clock()}
}

func newTestWatcher(t *testing.T, fs *feeds) *Watcher {
	t.Helper()
	w := NewWatcher(WatchOptions{Open: fs.open, Now: fs.clock})
	t.Cleanup(w.Close)
	return w
}

func TestWatcherHeardThenExpired(t *testing.T) {
	fs := newFeeds()
	w := newTestWatcher(t, fs)
	_, err := w.Neighbor("eth1")
	var nh *NotHeardError
	if !errors.As(err, &nh) || !nh.Since.Equal(fs.clock()) || nh.For != 0 {
		t.Fatalf("first question: %v, want not heard yet, listening since now", err)
	}
	if !strings.Contains(err.Error(), "no LLDP frame on eth1 yet (listening since 2027-01-15T08:00:00Z") {
		t.Errorf("message %q", err)
	}
	n := fs.neighbor("leaf-1", "swp03", 120*time.Second)
	fs.send(t, "eth1", result{n: n})
	wait.For(t, "the neighbour to be recorded", func() bool {
		got, err := w.Neighbor("eth1")
		return err == nil && got.Label() == "leaf-1 port swp03"
	})
	fs.advance(121 * time.Second)
	_, err = w.Neighbor("eth1")
	var ex *ExpiredError
	if !errors.As(err, &ex) || ex.Shutdown || !strings.Contains(err.Error(), "expired: nothing since 2027-01-15T08:00:00Z and its TTL was 2m0s") {
		t.Errorf("after the TTL: %v", err)
	}
}

func TestWatcherShutdownAndAmbiguity(t *testing.T) {
	fs := newFeeds()
	w := newTestWatcher(t, fs)
	w.Wait(context.Background()) // nothing to wait for: returns at once
	a, b := fs.neighbor("leaf-1", "swp03", time.Minute), fs.neighbor("leaf-2", "swp04", time.Minute)
	_, _ = w.Neighbor("eth1")
	fs.send(t, "eth1", result{n: a})
	fs.send(t, "eth1", result{n: b})
	wait.For(t, "two agents on eth1", func() bool {
		_, err := w.Neighbor("eth1")
		var am *AmbiguousError
		return errors.As(err, &am) && len(am.Neighbors) == 2
	})
	_, err := w.Neighbor("eth1")
	if !strings.Contains(err.Error(), "2 LLDP neighbours on eth1 (leaf-1 port swp03; leaf-2 port swp04)") {
		t.Errorf("message %q", err)
	}
	bye := b
	bye.TTL = 0
	fs.send(t, "eth1", result{n: bye})
	wait.For(t, "leaf-2's shutdown to leave leaf-1 alone", func() bool {
		got, err := w.Neighbor("eth1")
		return err == nil && got.SystemName == "leaf-1"
	})
	a.TTL = 0
	fs.send(t, "eth1", result{n: a})
	wait.For(t, "leaf-1's shutdown", func() bool {
		_, err := w.Neighbor("eth1")
		var ex *ExpiredError
		return errors.As(err, &ex) && ex.Shutdown && strings.Contains(err.Error(), "announced its shutdown")
	})
}

func TestWatcherMalformedAndFailures(t *testing.T) {
	fs := newFeeds()
	perm := &PermissionError{Interface: "eth2", Err: errors.New("operation not permitted")}
	fs.fail["eth2"] = perm
	w := newTestWatcher(t, fs)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = w.Neighbor("eth1")
	fs.send(t, "eth1", result{err: &MalformedError{Interface: "eth1", From: "52:54:00:00:00:09", Err: errors.New("LLDPDU byte 0: truncated")}})
	w.Wait(ctx, "eth2") // a listener that cannot open is done waiting
	if _, err := w.Neighbor("eth2"); !errors.As(err, new(*PermissionError)) || !strings.Contains(err.Error(), "needs CAP_NET_RAW to read LLDP frames on eth2") {
		t.Errorf("eth2: %v", err)
	}
	wait.For(t, "eth1's malformed frame to be quoted", func() bool {
		_, err := w.Neighbor("eth1")
		return err != nil && strings.Contains(err.Error(), "the last frame that was not a valid LLDPDU: malformed LLDP frame on eth1 from 52:54:00:00:00:09")
	})
	// A listener that cannot open is tried at every question, and the
	// answer stays the same while the cause does: a worker's inventory
	// must not change with every rescan.
	_, again := w.Neighbor("eth2")
	fs.mu.Lock()
	opens := fs.opens["eth2"]
	fs.mu.Unlock()
	if again == nil || again.Error() != perm.Error() || opens != 3 {
		t.Errorf("eth2 asked again: %v after %d opens; want the same permission error after 3", again, opens)
	}
	fs.send(t, "eth1", result{err: errors.New("read LLDP on eth1: network is down")})
	wait.For(t, "eth1's read error", func() bool {
		_, err := w.Neighbor("eth1")
		return err != nil && strings.Contains(err.Error(), "network is down")
	})
	// Reported once; the listener was opened again at that question.
	_, err := w.Neighbor("eth1")
	var nh *NotHeardError
	if !errors.As(err, &nh) || nh.Malformed != nil {
		t.Errorf("after the read error: %v, want a fresh listener that has heard nothing", err)
	}
}

func TestWatcherWaitAndClose(t *testing.T) {
	fs := newFeeds()
	w := NewWatcher(WatchOptions{Open: fs.open, Now: fs.clock})
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Wait(context.Background(), "eth1", "eth2")
	}()
	fs.send(t, "eth1", result{n: fs.neighbor("leaf-1", "swp01", time.Minute)})
	select {
	case <-done:
		t.Fatal("Wait returned before eth2 heard anything")
	default:
	}
	fs.send(t, "eth2", result{n: fs.neighbor("leaf-1", "swp02", time.Minute)})
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not return once both interfaces heard a neighbour")
	}
	w.Close()
	fs.mu.Lock()
	closed := fs.by["eth1"].closed.Load() && fs.by["eth2"].closed.Load()
	fs.mu.Unlock()
	if !closed {
		t.Error("Close left a listener open")
	}
	if _, err := w.Neighbor("eth1"); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}

	// A bounded wait on a silent interface ends with its context.
	w2 := newTestWatcher(t, newFeeds())
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	w2.Wait(ctx, "eth9")
	if ctx.Err() == nil {
		t.Error("Wait returned before its context ended with nothing heard")
	}
}
