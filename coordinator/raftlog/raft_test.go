package raftlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
)

// tailCuts counts the DeleteRange calls that take a log's tail.
type tailCuts struct {
	*Store
	mu sync.Mutex
	n  int
}

func (c *tailCuts) DeleteRange(lo, hi uint64) error {
	if last, _ := c.LastIndex(); hi >= last && lo > 0 {
		if first, _ := c.FirstIndex(); lo > first {
			c.mu.Lock()
			c.n++
			c.mu.Unlock()
		}
	}
	return c.Store.DeleteRange(lo, hi)
}

func (c *tailCuts) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

type nopFSM struct{}

func (nopFSM) Apply(*raft.Log) any                 { return nil }
func (nopFSM) Snapshot() (raft.FSMSnapshot, error) { return nil, fmt.Errorf("no snapshots here") }
func (nopFSM) Restore(io.ReadCloser) error         { return nil }

// TestRaftCutsAFollowersTailAndItReopens is the case raft-wal v0.4.0 fails
// (hashicorp/raft-wal#31): a leader cut off from its peers appends entries
// no one else has; the others elect a leader and commit different ones;
// when the old leader rejoins, raft cuts its log's tail and appends the
// new leader's entries. Its log must then read back as the new leader's,
// before and after a reopen.
func TestRaftCutsAFollowersTailAndItReopens(t *testing.T) {
	const n = 3
	var (
		dirs   [n]string
		logs   [n]*tailCuts
		trans  [n]*raft.InmemTransport
		nodes  [n]*raft.Raft
		config raft.Configuration
	)
	for i := range n {
		dirs[i] = t.TempDir()
		s, err := Open(dirs[i], Options{SegmentBytes: 8 << 10})
		if err != nil {
			t.Fatal(err)
		}
		logs[i] = &tailCuts{Store: s}
		addr := raft.ServerAddress(fmt.Sprintf("node%d", i))
		_, trans[i] = raft.NewInmemTransport(addr)
		config.Servers = append(config.Servers, raft.Server{ID: raft.ServerID(addr), Address: addr})
	}
	connect := func(i int) {
		for j := range n {
			if i != j {
				trans[i].Connect(trans[j].LocalAddr(), trans[j])
				trans[j].Connect(trans[i].LocalAddr(), trans[i])
			}
		}
	}
	for i := range n {
		connect(i)
	}
	for i := range n {
		c := raft.DefaultConfig()
		c.LocalID = config.Servers[i].ID
		c.HeartbeatTimeout, c.ElectionTimeout = 100*time.Millisecond, 100*time.Millisecond
		c.LeaderLeaseTimeout, c.CommitTimeout = 100*time.Millisecond, 5*time.Millisecond
		c.Logger = hclog.New(&hclog.LoggerOptions{Output: io.Discard, Level: hclog.Off})
		r, err := raft.NewRaft(c, nopFSM{}, logs[i], raft.NewInmemStore(), raft.NewInmemSnapshotStore(), trans[i])
		if err != nil {
			t.Fatal(err)
		}
		nodes[i] = r
	}
	defer func() {
		for i := range n {
			if nodes[i] != nil {
				if err := nodes[i].Shutdown().Error(); err != nil {
					t.Errorf("shut node %d down: %v", i, err)
				}
			}
			logs[i].Close()
		}
	}()
	if err := nodes[0].BootstrapCluster(config).Error(); err != nil {
		t.Fatal(err)
	}
	leader := func(except int) int {
		for i := range n {
			if i != except && nodes[i].State() == raft.Leader {
				return i
			}
		}
		return -1
	}
	wait.For(t, "a leader", func() bool { return leader(-1) >= 0 })
	old := leader(-1)
	payload := func(tag string, k int) []byte { return bytes.Repeat([]byte(fmt.Sprintf("%s-%d;", tag, k)), 300) }
	for k := range 20 {
		if err := nodes[old].Apply(payload("shared", k), time.Second).Error(); err != nil {
			t.Fatal(err)
		}
	}

	// Cut the leader off; it appends entries only it will ever hold.
	trans[old].DisconnectAll()
	for j := range n {
		if j != old {
			trans[j].Disconnect(trans[old].LocalAddr())
		}
	}
	before, _ := logs[old].LastIndex()
	for k := range 5 {
		nodes[old].Apply(payload("stale", k), 0) // never committed
	}
	wait.For(t, "the cut-off leader's own entries", func() bool { l, _ := logs[old].LastIndex(); return l >= before+5 })

	wait.For(t, "a leader among the others", func() bool { return leader(old) >= 0 })
	next := leader(old)
	for k := range 30 {
		// On a loaded machine the new leader may lose an election mid-way;
		// the entry then goes to whoever leads next, as a client would.
		for {
			err := nodes[next].Apply(payload("new", k), time.Second).Error()
			if err == nil {
				break
			}
			if !errors.Is(err, raft.ErrLeadershipLost) && !errors.Is(err, raft.ErrNotLeader) {
				t.Fatal(err)
			}
			wait.For(t, "a leader among the others again", func() bool { return leader(old) >= 0 })
			next = leader(old)
		}
	}

	connect(old)
	want, _ := logs[next].LastIndex()
	wait.For(t, "the old leader to hold the new leader's log", func() bool { l, _ := logs[old].LastIndex(); return l >= want })
	if logs[old].count() == 0 {
		t.Fatal("raft never cut the old leader's tail: the test did not set up the case")
	}
	same := func(a, b raft.LogStore) {
		t.Helper()
		for i := before - 5; i <= want; i++ {
			var x, y raft.Log
			if err := a.GetLog(i, &x); err != nil {
				t.Fatalf("old leader, entry %d: %v", i, err)
			}
			if err := b.GetLog(i, &y); err != nil {
				t.Fatalf("new leader, entry %d: %v", i, err)
			}
			if x.Term != y.Term || !bytes.Equal(x.Data, y.Data) {
				t.Fatalf("entry %d: old leader has term %d %.12q, new leader term %d %.12q", i, x.Term, x.Data, y.Term, y.Data)
			}
		}
	}
	same(logs[old], logs[next])

	for i := range n {
		if err := nodes[i].Shutdown().Error(); err != nil {
			t.Fatalf("shut node %d down: %v", i, err)
		}
		nodes[i] = nil
	}
	logs[old].Close()
	s, err := Open(dirs[old], Options{SegmentBytes: 8 << 10})
	if err != nil {
		t.Fatalf("reopen the old leader's log after its tail was cut: %v", err)
	}
	logs[old].Store = s
	same(s, logs[next])
}
