package store

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
)

// The kept codes rest on hashicorp/raft handing the leader's FSM the very
// slice given to Apply. Should a raft upgrade copy it, every apply would
// quietly decode again; this test says so.
func TestRaftHandsTheLeaderItsOwnEntry(t *testing.T) {
	f := New(1, nil)
	conf := raft.DefaultConfig()
	conf.LocalID = "n1"
	conf.Logger = hclog.NewNullLogger()
	conf.HeartbeatTimeout, conf.ElectionTimeout = 50*time.Millisecond, 50*time.Millisecond
	conf.LeaderLeaseTimeout, conf.CommitTimeout = 50*time.Millisecond, 5*time.Millisecond
	mem := raft.NewInmemStore()
	addr, trans := raft.NewInmemTransport("n1")
	r, err := raft.NewRaft(conf, f, mem, mem, raft.NewInmemSnapshotStore(), trans)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Shutdown().Error(); err != nil {
			t.Error(err)
		}
	}()
	if err := r.BootstrapCluster(raft.Configuration{Servers: []raft.Server{{ID: "n1", Address: addr}}}).Error(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.LeaderCh():
	case <-time.After(10 * time.Second):
		t.Fatal("no leader")
	}
	nodes := gridNodes(3, 2)
	x := NewNodeIndex(nodes)
	if err := r.Apply(mustStart(t, Start{Info: api.SweepInfo{ID: "s", State: api.SweepRunning}, Nodes: nodes}), 0).Error(); err != nil {
		t.Fatal(err)
	}
	cells := randomCells(rand.New(rand.NewPCG(1, 2)), nodes, 0)
	b, err := f.EncodeOwnRound(&x, sweep.RoundResult{SweepID: "s", Cells: cells})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Apply(b, 0).Error(); err != nil {
		t.Fatal(err)
	}
	if f.kept.len() != 0 {
		t.Fatal("raft applied a copy of the leader's entry: the leader decodes its own rounds again")
	}
	if sv, _ := f.sweepData("s"); sv.Info.CellsDone != len(cells) {
		t.Fatalf("%d cells applied", sv.Info.CellsDone)
	}
}
