package store

import (
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// Traced paths are part of a sweep's record: the leader traces its tests'
// flows after the rounds and commits what the hops answered (EntryPaths),
// so every replica routes those cells over the same measured paths. They
// go with their sweep when it is dropped.

// EntryPaths is a batch of one sweep's traced flows (wire.PathsMsg). It
// is ignorable: a replica that skips it routes the cells over the model,
// as before paths were traced.
const EntryPaths = Ignorable | 8

// EncodePaths is the entry committing p.
func EncodePaths(p *wire.SweepPaths) []byte {
	return wire.PathsMsg.Append([]byte{byte(EntryPaths)}, p)
}

type flowKey struct {
	src, dst string
	rail     int
	back     bool
}

func flowKeyOf(f *wire.FlowPath) flowKey { return flowKey{f.Src, f.Dst, f.Rail, f.Back} }

func (f *FSM) applyPaths(b []byte) error {
	p, err := wire.PathsMsg.Decode(b)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	rec, ok := f.sweeps[p.SweepID]
	if !ok || len(p.Flows) == 0 {
		return nil
	}
	rec.paths = mergePaths(rec.paths, p.Flows)
	f.seq++
	rec.Version = f.seq
	return nil
}

// mergePaths is old with add's flows, a flow traced again replacing its
// older trace (a leader that retried, or a later trace). It builds a new
// slice: readers hold the old one without the lock.
func mergePaths(old, add []wire.FlowPath) []wire.FlowPath {
	at := make(map[flowKey]int, len(old)+len(add))
	out := make([]wire.FlowPath, 0, len(old)+len(add))
	for _, fs := range [][]wire.FlowPath{old, add} {
		for i := range fs {
			k := flowKeyOf(&fs[i])
			if j, ok := at[k]; ok {
				out[j] = fs[i]
				continue
			}
			at[k] = len(out)
			out = append(out, fs[i])
		}
	}
	return out
}

// Paths is sweep id's traced flows (nil: none traced). The slice is not
// changed afterwards: a later entry replaces it.
func (f *FSM) Paths(id string) []wire.FlowPath {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if rec, ok := f.sweeps[id]; ok {
		return rec.paths
	}
	return nil
}

// pathsState is what a snapshot keeps of the traced paths; the caller
// holds the lock.
func (f *FSM) pathsState() []wire.SweepPaths {
	var out []wire.SweepPaths
	for _, id := range f.order {
		if rec := f.sweeps[id]; rec != nil && len(rec.paths) > 0 {
			out = append(out, wire.SweepPaths{SweepID: id, Flows: rec.paths})
		}
	}
	return out
}

// restorePaths gives the restored sweeps their traced paths.
func restorePaths(ps []wire.SweepPaths, sweeps map[string]*sweepRecord) {
	for _, p := range ps {
		if rec, ok := sweeps[p.SweepID]; ok {
			rec.paths = mergePaths(rec.paths, p.Flows)
		}
	}
}
