package store

import (
	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// Read helpers, safe to call from any goroutine.

func (f *FSM) Infos() []api.SweepInfo {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := make([]api.SweepInfo, 0, len(f.order))
	for i := len(f.order) - 1; i >= 0; i-- {
		out = append(out, f.sweeps[f.order[i]].Info)
	}
	return out
}

func (f *FSM) Info(id string) (api.SweepInfo, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	rec, ok := f.sweeps[id]
	if !ok {
		return api.SweepInfo{}, false
	}
	return rec.Info, true
}

// Grid copies one sweep's header, spec and nodes, and freezes its
// cells for matrix.BuildFrom to read one at a time outside the lock, so a
// reader of a big sweep does not hold up Apply while it analyses.
func (f *FSM) Grid(id string) (View, *GridSource, bool) {
	f.mu.Lock() // freeze bumps the store's epoch
	defer f.mu.Unlock()
	rec, ok := f.sweeps[id]
	if !ok {
		return View{}, nil, false
	}
	return f.meta(rec), newGridSource(rec.Cells.freeze()), true
}

// Meta is Grid without the cells.
func (f *FSM) Meta(id string) (View, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	rec, ok := f.sweeps[id]
	if !ok {
		return View{}, false
	}
	return f.meta(rec), true
}

func (f *FSM) meta(rec *sweepRecord) View {
	rounds := make(map[int]bool, len(rec.Rounds))
	for r := range rec.Rounds {
		rounds[r] = true
	}
	retests := make(map[int]sweep.RetestPlan, len(rec.Retests))
	for p, plan := range rec.Retests {
		retests[p] = planOut(&plan)
	}
	return View{Version: rec.Version, Record: sweep.Record{Info: rec.Info, Spec: specOut(rec.Spec), Nodes: rec.counters.withCounters(nodesOut(rec.Nodes), rec.Nodes),
		Rounds: rounds, Retests: retests}}
}

// View is a copy of one sweep, safe to use without the FSM lock.
type View struct {
	sweep.Record
	Version uint64
	Cells   []matrix.Cell // decoded by the tests' sweepData; the analysis reads the grid
}

// version is a sweep's record version, without copying the record.
func (f *FSM) Version(id string) (uint64, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	rec, ok := f.sweeps[id]
	if !ok {
		return 0, false
	}
	return rec.Version, true
}

// running returns the IDs of sweeps not yet ended, oldest first.
func (f *FSM) Running() []string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var out []string
	for _, id := range f.order {
		if f.sweeps[id].Info.State == api.SweepRunning {
			out = append(out, id)
		}
	}
	return out
}

// Ended reports whether sweep id's end is committed.
func (f *FSM) Ended(id string) bool {
	info, ok := f.Info(id)
	return ok && info.State != api.SweepRunning
}
