package store

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// Snapshots are internal/wire's snapshot stream: per sweep its record and
// its grid blocks as the store holds them, so writing one is a walk over
// frozen blocks and memory stays flat however big the sweeps are (a
// 1,024 x 8 sweep would be a 3.4 GB JSON byte slice).

type frozenSweep struct {
	rec   sweepRecord // header fields only; Cells is the frozen view below
	cells storeView
}

type snapshot struct {
	sweeps []frozenSweep
	live   *wire.LivePlan // the newest committed live plan, if any
	counts []wire.SweepCounters
	topos  *wire.TopologyState
	paths  []wire.SweepPaths
}

var _ raft.FSMSnapshot = (*snapshot)(nil)

// Snapshot captures the state on the FSM goroutine: record headers are
// copied and cell stores frozen (copy-on-write), so Persist can stream them
// while Apply goes on.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock() // freezing bumps the stores' epochs
	defer f.mu.Unlock()
	snap := &snapshot{live: f.livePlan, topos: f.topologyState(), paths: f.pathsState()} // applyLivePlan replaces the plan, never edits it
	for _, id := range f.order {
		rec := f.sweeps[id]
		head := sweepRecord{Info: rec.Info, Spec: rec.Spec, Nodes: rec.Nodes, Rounds: rec.Rounds, Retests: rec.Retests}
		head.Rounds = make(map[int]bool, len(rec.Rounds))
		for r := range rec.Rounds {
			head.Rounds[r] = true
		}
		head.Retests = make(map[int]wire.RetestPlan, len(rec.Retests))
		for p, plan := range rec.Retests {
			head.Retests[p] = plan
		}
		snap.sweeps = append(snap.sweeps, frozenSweep{rec: head, cells: rec.Cells.freeze()})
		if sc, ok := rec.counters.snapshot(id); ok {
			snap.counts = append(snap.counts, sc)
		}
	}
	return snap, nil
}

func (s *snapshot) Persist(sink raft.SnapshotSink) error {
	sweeps := make([]wire.SnapshotSweep, len(s.sweeps))
	for i := range s.sweeps {
		sweeps[i] = s.sweeps[i].record()
	}
	if err := wire.WriteSnapshotWith(sink, sweeps, wire.SnapshotTrailer{Live: s.live, Counters: s.counts, Topologies: s.topos, Paths: s.paths}); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *snapshot) Release() {}

// record is the sweep as the snapshot stream takes it.
func (fs *frozenSweep) record() wire.SnapshotSweep {
	rec, v := &fs.rec, &fs.cells
	out := wire.SnapshotSweep{Info: rec.Info, Spec: rec.Spec, Nodes: rec.Nodes, Whole: sortedCells(v.extra), Classes: v.classes}
	for r := range rec.Rounds {
		out.Rounds = append(out.Rounds, r)
	}
	slices.Sort(out.Rounds)
	for p := 1; p <= len(rec.Retests); p++ {
		out.Retests = append(out.Retests, rec.Retests[p])
	}
	for slot, a := range v.retests {
		out.Attempts = append(out.Attempts, wire.SlotAttempts{Slot: slot, Attempts: a})
	}
	slices.SortFunc(out.Attempts, func(a, b wire.SlotAttempts) int { return cmp.Compare(a.Slot, b.Slot) })
	out.Errors = make([]probe.Error, len(v.errs))
	for i, e := range v.errs {
		out.Errors[i] = *e
	}
	if v.blocks != nil {
		out.Blocks = make([]*wire.GridBlock, len(v.blocks))
		for i, b := range v.blocks {
			if b != nil {
				out.Blocks[i] = &b.GridBlock
			}
		}
	}
	out.Flows, out.BackFlows = v.flows, v.back
	return out
}

// Restore replaces the state with a snapshot.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	sweeps := map[string]*sweepRecord{}
	var order []string
	trailer, err := wire.ReadSnapshotWith(rc, func(ss *wire.SnapshotSweep) error {
		rec := restoreSweep(ss)
		sweeps[rec.Info.ID] = rec
		order = append(order, rec.Info.ID)
		return nil
	})
	if err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	for _, sc := range trailer.Counters {
		if rec, ok := sweeps[sc.SweepID]; ok {
			rec.counters = restoreCounters(sc)
		}
	}
	restorePaths(trailer.Paths, sweeps)
	topos, err := restoreTopologies(trailer.Topologies, sweeps)
	if err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	f.mu.Lock()
	f.sweeps, f.order, f.livePlan, f.topos = sweeps, order, trailer.Live, topos
	for _, rec := range sweeps {
		f.seq++
		rec.Version = f.seq
	}
	f.mu.Unlock()
	return nil
}

// restoreSweep rebuilds a sweep's record from what wire.ReadSnapshot read
// and checked.
func restoreSweep(ss *wire.SnapshotSweep) *sweepRecord {
	rec := newRecord(ss.Info, ss.Spec, ss.Nodes)
	for _, p := range ss.Retests {
		rec.Retests[p.Pass] = p
	}
	for _, r := range ss.Rounds {
		rec.Rounds[r] = true
	}
	st := rec.Cells
	for _, c := range ss.Whole {
		st.extra[keyOf(&c)] = c
	}
	for _, a := range ss.Attempts {
		st.retests[a.Slot] = a.Attempts
	}
	// The tables as written: the blocks' codes index them (a duplicate
	// entry, which a store never writes, only wastes a code).
	st.classes = ss.Classes
	for i, c := range ss.Classes {
		if _, dup := st.classCode[c]; !dup {
			st.classCode[c] = uint8(i + 1)
		}
	}
	for i := range ss.Errors {
		e := &ss.Errors[i]
		st.errs = append(st.errs, e)
		if _, dup := st.errCode[*e]; !dup {
			st.errCode[*e] = uint16(i + 1)
		}
	}
	st.count = len(st.extra)
	if ss.Blocks != nil {
		st.blocks = make([]*cellBlock, len(ss.Blocks))
	}
	for i, gb := range ss.Blocks {
		if gb == nil {
			continue
		}
		b := &cellBlock{GridBlock: *gb}
		for _, c := range b.Class {
			if c != 0 {
				st.count++
			}
			if c&flagLat != 0 {
				b.hasLat++
			}
		}
		st.blocks[i] = b
		restoreFlows(&st.flows, ss.Flows, i)
		restoreFlows(&st.backFlows, ss.BackFlows, i)
	}
	return rec
}
