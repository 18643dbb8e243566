package store

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/hashicorp/raft"
	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// snapshotState is the serialised form of the FSM.
type snapshotState struct {
	Sweeps []snapshotSweep `json:"sweeps"`
}

type snapshotSweep struct {
	Info    api.SweepInfo      `json:"info"`
	Spec    sweep.Spec         `json:"spec"`
	Nodes   []matrix.Node      `json:"nodes"`
	Cells   []matrix.Cell      `json:"cells,omitempty"` // JSON snapshots only
	Rounds  []int              `json:"rounds"`
	Retests []sweep.RetestPlan `json:"retests,omitempty"`
}

// Snapshot captures the state on the FSM goroutine: record headers are
// copied and cell stores frozen (copy-on-write), so Persist can stream them
// while Apply goes on. See snapshot.go for the format.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock() // freezing bumps the stores' epochs
	defer f.mu.Unlock()
	snap := &binSnapshot{}
	for _, id := range f.order {
		rec := f.sweeps[id]
		ss := snapshotSweep{Info: rec.Info, Spec: rec.Spec, Nodes: rec.Nodes}
		for r := range rec.Rounds {
			ss.Rounds = append(ss.Rounds, r)
		}
		slices.Sort(ss.Rounds)
		for p := 1; p <= len(rec.Retests); p++ {
			ss.Retests = append(ss.Retests, rec.Retests[p])
		}
		snap.sweeps = append(snap.sweeps, frozenSweep{head: ss, cells: rec.Cells.freeze()})
	}
	return snap, nil
}

// Restore replaces the state with a snapshot, binary or (from before the
// binary format) JSON.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	sweeps, order, err := readSnapshot(rc)
	if err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	f.mu.Lock()
	f.sweeps, f.order = sweeps, order
	for _, rec := range sweeps {
		f.seq++
		rec.Version = f.seq
	}
	f.mu.Unlock()
	return nil
}

// restoreJSON reads the JSON snapshots written before the binary format.
func restoreJSON(r io.Reader) (map[string]*sweepRecord, []string, error) {
	var st snapshotState
	if err := json.NewDecoder(r).Decode(&st); err != nil {
		return nil, nil, err
	}
	sweeps := map[string]*sweepRecord{}
	var order []string
	for _, ss := range st.Sweeps {
		rec := newRecord(ss.Info, ss.Spec, ss.Nodes)
		for _, c := range ss.Cells {
			rec.Cells.put(c)
		}
		for _, p := range ss.Retests {
			rec.Retests[p.Pass] = p
		}
		for _, r := range ss.Rounds {
			rec.Rounds[r] = true
		}
		sweeps[ss.Info.ID] = rec
		order = append(order, ss.Info.ID)
	}
	return sweeps, order, nil
}
