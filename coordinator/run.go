package coordinator

import (
	"context"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/store"
	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// runSweep runs (or, on a new leader, resumes) sweep id with the sweep
// engine, over the store, raft and the workers' HTTP API.
func (c *Coordinator) runSweep(ctx context.Context, id string) {
	defer c.setActive(id, false)
	c.setActive(id, true)
	e := sweep.Engine{View: storeView{c}, Commit: &raftCommitter{c: c}, Dispatch: workerDispatch{c}, Paths: c, Steer: c, Topology: c.sweepTopology,
		Parallelism: c.opts.Parallelism, Log: c.log, OnRound: c.opts.OnRound}
	e.Run(ctx, id)
}

func (c *Coordinator) setActive(id string, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case on:
		c.active = id
	case c.active == id:
		c.active = ""
	}
}

// storeView is the engine's read-only View of the FSM; analyses go through
// the coordinator's matrix cache.
type storeView struct{ c *Coordinator }

func (v storeView) Record(id string) (sweep.Record, bool) {
	sv, ok := v.c.fsm.Meta(id)
	return sv.Record, ok
}

func (v storeView) Info(id string) (api.SweepInfo, bool)    { return v.c.fsm.Info(id) }
func (v storeView) Matrix(id string) (*matrix.Matrix, bool) { return v.c.freshMatrix(id) }

// raftCommitter is the engine's Committer: each call is one raft entry,
// applied by every replica's FSM before it returns.
type raftCommitter struct {
	c *Coordinator
	// index encodes one sweep's rounds compactly (FSM.EncodeOwnRound); the
	// engine commits rounds from one goroutine, so it needs no lock.
	id    string
	index store.NodeIndex
}

func (k *raftCommitter) CommitRound(r sweep.RoundResult) func() (int, error) {
	if k.id != r.SweepID {
		sv, _ := k.c.fsm.Meta(r.SweepID)
		k.id, k.index = r.SweepID, store.NewNodeIndex(sv.Nodes)
	}
	// Encoded through our FSM: when raft applies this very entry here, the
	// FSM takes the codes the encoder kept instead of decoding them again.
	b, err := k.c.fsm.EncodeOwnRound(&k.index, r)
	if err != nil {
		return func() (int, error) { return 0, err }
	}
	applied := k.c.raft.Apply(b, applyTimeout)
	id, round := r.SweepID, r.Round
	return func() (int, error) {
		if err := applied.Error(); err != nil {
			return len(b), err
		}
		k.c.commitCounts(id, round)
		return len(b), nil
	}
}

func (k *raftCommitter) CommitRetestPlan(p sweep.RetestPlan) error {
	return k.c.apply(store.EncodeRetestPlan(p))
}

func (k *raftCommitter) EndSweep(id, state, msg string, healthy *bool) error {
	k.c.counts.drop(id)
	return k.c.apply(store.EncodeEnd(store.End{SweepID: id, State: state, Error: msg, At: time.Now().UTC(), Healthy: healthy}))
}
