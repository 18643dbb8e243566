package store

import (
	"cmp"
	"slices"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// cellKey identifies a directional path; DstRail equals Rail except on
// cross-rail cells.
type cellKey struct {
	Src, Dst      string
	Rail, DstRail int
}

func keyOf(c *wire.Cell) cellKey {
	k := cellKey{Src: c.Src, Dst: c.Dst, Rail: c.Rail, DstRail: c.Rail}
	if c.DstRail != nil {
		k.DstRail = *c.DstRail
	}
	return k
}

// sweepRecord is one sweep as the store keeps it, in the log's types.
type sweepRecord struct {
	// Version changes whenever what the analysis reads does (cells,
	// nodes, spec), so a matrix can be cached until then. A sweep's end and
	// its retest plans change only the header: the matrix the leader built
	// to decide `healthy` stays the one every reader gets (at 1,024 x 8 a
	// rebuild is ten seconds and gigabytes).
	Version uint64
	Info    api.SweepInfo
	Spec    wire.Spec
	Nodes   []wire.Node
	Cells   *cellStore // see cellstore.go
	Rounds  map[int]bool
	// Retests holds the confirmation passes planned so far, by pass (1..).
	Retests map[int]wire.RetestPlan
	// counters are the ports' counter sums (counters.go); nil: none moved.
	counters *sweepCounters
	// paths are its traced flows (paths.go); nil: none traced.
	paths []wire.FlowPath
}

func (f *FSM) applyStart(b []byte) error {
	s, err := wire.StartRecord.Decode(b)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, dup := f.sweeps[s.Info.ID]; dup {
		return nil // a leader retried the proposal
	}
	rec := newRecord(s.Info, s.Spec, s.Nodes)
	rec.Info.Topology = f.topos.current
	f.sweeps[s.Info.ID] = rec
	f.order = append(f.order, s.Info.ID)
	for len(f.order) > f.keep {
		delete(f.sweeps, f.order[0])
		f.order = f.order[1:]
	}
	f.pruneTopologies()
	return nil
}

// merge stores one cell of a round. Keyed by (src, dst, rail, dst rail): a
// main round fills a cell once; a confirmation round adds an attempt to it
// instead of replacing it.
func (rec *sweepRecord) merge(c wire.Cell, retest bool) {
	// An attempt's figures are quantized as the first measurement's were.
	if !retest || !rec.Cells.addAttempt(keyOf(&c), wire.Attempt{Round: c.Round, Class: c.Class, Error: c.Error,
		Latency: quantLat(c.Latency), Bandwidth: quantBW(c.Bandwidth)}) {
		rec.Cells.put(c)
	}
}

// roundDone marks a round committed; the caller holds the lock.
func (f *FSM) roundDone(rec *sweepRecord, round int, retest bool) {
	rec.Rounds[round] = true
	f.seq++
	rec.Version = f.seq
	rec.Info.RoundsDone = len(rec.Rounds)
	if !retest {
		rec.Info.CellsDone = rec.Cells.len()
	}
}

func (f *FSM) applyRetestPlan(b []byte) error {
	p, err := wire.RetestPlanRecord.Decode(b)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	rec, ok := f.sweeps[p.SweepID]
	if !ok {
		return nil
	}
	if _, dup := rec.Retests[p.Pass]; dup {
		return nil
	}
	rec.Retests[p.Pass] = p
	rec.Info.Rounds += len(p.Rounds)
	rec.Info.RetestPass = p.Pass
	rec.Info.Retested += p.Pairs
	return nil
}

func newRecord(info api.SweepInfo, spec wire.Spec, nodes []wire.Node) *sweepRecord {
	shareDevices(nodes)
	return &sweepRecord{Info: info, Spec: spec, Nodes: nodes, Cells: newCellStore(nodes), Rounds: map[int]bool{},
		Retests: map[int]wire.RetestPlan{}}
}

// shareDevices makes equal device names one string. The leader compares a
// task's rails with the ones it encoded last (wire.TaskEncoder) and each
// cell's devices with the grid's, millions of times a sweep; equal strings
// that share their bytes compare by pointer, where each node's own copy of
// "mlx5_0" was compared byte by byte (3 of the leader's 310 CPU-s at
// 4,096). The nodes are the record's own, fresh from a decoder.
func shareDevices(nodes []wire.Node) {
	seen := map[string]string{}
	for i := range nodes {
		for j := range nodes[i].Ports {
			p := &nodes[i].Ports[j]
			if s, ok := seen[p.Device]; ok {
				p.Device = s
			} else {
				seen[p.Device] = p.Device
			}
		}
	}
}

// isRetestRound reports whether round index r belongs to a confirmation
// pass: their indices continue after the main rounds'.
func (rec *sweepRecord) isRetestRound(r int) bool {
	for _, p := range rec.Retests {
		for _, rd := range p.Rounds {
			if rd.Index == r {
				return true
			}
		}
	}
	return false
}

func (f *FSM) applyEnd(b []byte) error {
	e, err := wire.EndRecord.Decode(b)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if rec, ok := f.sweeps[e.SweepID]; ok {
		rec.Info.State, rec.Info.Error, rec.Info.Finished, rec.Info.Healthy = e.State, e.Error, e.At, e.Healthy
	}
	return nil
}

func sortedCells(m map[cellKey]wire.Cell) []wire.Cell {
	out := make([]wire.Cell, 0, len(m))
	for _, c := range m {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b wire.Cell) int {
		ka, kb := keyOf(&a), keyOf(&b)
		return cmp.Or(cmp.Compare(a.Rail, b.Rail), cmp.Compare(ka.DstRail, kb.DstRail), cmp.Compare(a.Src, b.Src), cmp.Compare(a.Dst, b.Dst))
	})
	return out
}
