package store

import (
	"cmp"
	"encoding/json"
	"slices"

	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// cellKey identifies a directional path; DstRail equals Rail except on
// cross-rail cells.
type cellKey struct {
	Src, Dst      string
	Rail, DstRail int
}

func keyOf(c *matrix.Cell) cellKey {
	k := cellKey{Src: c.Src, Dst: c.Dst, Rail: c.Rail, DstRail: c.Rail}
	if c.DstRail != nil {
		k.DstRail = *c.DstRail
	}
	return k
}

type sweepRecord struct {
	// Version changes whenever what the analysis reads does (cells,
	// nodes, spec), so a matrix can be cached until then. A sweep's end and
	// its retest plans change only the header: the matrix the leader built
	// to decide `healthy` stays the one every reader gets (at 1,024 x 8 a
	// rebuild is ten seconds and gigabytes).
	Version uint64
	Info    api.SweepInfo
	Spec    sweep.Spec
	Nodes   []matrix.Node
	Cells   *cellStore // see cellstore.go
	Rounds  map[int]bool
	// Retests holds the confirmation passes planned so far, by pass (1..).
	Retests map[int]sweep.RetestPlan
}

func (f *FSM) applyStart(b []byte) error {
	var s Start
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, dup := f.sweeps[s.Info.ID]; dup {
		return nil // a leader retried the proposal
	}
	f.sweeps[s.Info.ID] = newRecord(s.Info, s.Spec, s.Nodes)
	f.order = append(f.order, s.Info.ID)
	for len(f.order) > f.keep {
		delete(f.sweeps, f.order[0])
		f.order = f.order[1:]
	}
	return nil
}

func (f *FSM) applyRound(b []byte) error {
	var r sweep.RoundResult
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	rec, ok := f.sweeps[r.SweepID]
	if !ok {
		return nil // aged out of the history
	}
	if rec.Rounds[r.Round] {
		return nil // a new leader re-ran a round that had landed after all
	}
	retest := rec.isRetestRound(r.Round)
	for _, c := range r.Cells {
		rec.merge(c, retest)
	}
	f.roundDone(rec, r.Round, retest)
	return nil
}

// merge stores one cell of a round. Keyed by (src, dst, rail, dst rail): a
// main round fills a cell once; a confirmation round adds an attempt to it
// instead of replacing it.
func (rec *sweepRecord) merge(c matrix.Cell, retest bool) {
	if !retest {
		rec.Cells.put(c)
		return
	}
	old, seen := rec.Cells.get(keyOf(&c))
	if !seen {
		rec.Cells.put(c)
		return
	}
	c = quantized(c) // as the first attempt was
	old.Retests = append(slices.Clip(old.Retests), matrix.Attempt{Round: c.Round, Class: c.Class, Error: c.Error,
		Latency: c.Latency, Bandwidth: c.Bandwidth})
	rec.Cells.put(old)
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
	var p sweep.RetestPlan
	if err := json.Unmarshal(b, &p); err != nil {
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

func newRecord(info api.SweepInfo, spec sweep.Spec, nodes []matrix.Node) *sweepRecord {
	return &sweepRecord{Info: info, Spec: spec, Nodes: nodes, Cells: newCellStore(nodes), Rounds: map[int]bool{},
		Retests: map[int]sweep.RetestPlan{}}
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
	var e End
	if err := json.Unmarshal(b, &e); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if rec, ok := f.sweeps[e.SweepID]; ok {
		rec.Info.State, rec.Info.Error, rec.Info.Finished, rec.Info.Healthy = e.State, e.Error, e.At, e.Healthy
	}
	return nil
}

func sortedCells(m map[cellKey]matrix.Cell) []matrix.Cell {
	out := make([]matrix.Cell, 0, len(m))
	for _, c := range m {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b matrix.Cell) int {
		ka, kb := keyOf(&a), keyOf(&b)
		return cmp.Or(cmp.Compare(a.Rail, b.Rail), cmp.Compare(ka.DstRail, kb.DstRail), cmp.Compare(a.Src, b.Src), cmp.Compare(a.Dst, b.Dst))
	})
	return out
}
