package coordinator

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// entryType is the first byte of every raft log entry; the FSM dispatches on
// it, and an unknown or undecodable entry panics so replicas never diverge.
type entryType byte

const (
	entrySweepStart entryType = 1
	entryRound      entryType = 2
	entrySweepEnd   entryType = 3
	entryRetestPlan entryType = 4
)

type sweepStart struct {
	Info  api.SweepInfo `json:"info"`
	Spec  sweepSpec     `json:"spec"`
	Nodes []matrix.Node `json:"nodes"`
}

type sweepSpec = sweep.Spec

// retestPlan fixes one confirmation pass's rounds before any of them runs,
// so a new leader resumes the same plan instead of re-deriving it from
// results that the pass itself has already changed.
type retestPlan struct {
	SweepID string            `json:"sweep_id"`
	Pass    int               `json:"pass"`
	Rounds  []scheduler.Round `json:"rounds"`
	Pairs   int               `json:"pairs"`
}

// roundResult is one round's cells: one entry per round keeps the log small
// and makes a round land atomically.
type roundResult struct {
	SweepID string        `json:"sweep_id"`
	Round   int           `json:"round"`
	Cells   []matrix.Cell `json:"cells,omitempty"` // JSON snapshots only
}

type sweepEnd struct {
	SweepID string    `json:"sweep_id"`
	State   string    `json:"state"`
	Error   string    `json:"error,omitempty"`
	At      time.Time `json:"at"`
	Healthy *bool     `json:"healthy,omitempty"`
}

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
	Spec    sweepSpec
	Nodes   []matrix.Node
	Cells   *cellStore // see cellstore.go
	Rounds  map[int]bool
	// Retests holds the confirmation passes planned so far, by pass (1..).
	Retests map[int]retestPlan
}

// fsm is the replicated state: the last keep sweeps and their cells.
type fsm struct {
	keep int

	mu     sync.RWMutex
	seq    uint64 // bumped on every change; source of record versions
	sweeps map[string]*sweepRecord
	order  []string // oldest first
}

func newFSM(keep int) *fsm {
	if keep < 1 {
		keep = 1
	}
	return &fsm{keep: keep, sweeps: map[string]*sweepRecord{}}
}

func encodeEntry(t entryType, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append([]byte{byte(t)}, body...), nil
}

// Apply implements raft.FSM.
func (f *fsm) Apply(l *raft.Log) any {
	if len(l.Data) == 0 {
		panic(fmt.Sprintf("fsm: empty log entry at index %d", l.Index))
	}
	handler, ok := map[entryType]func([]byte) error{
		entrySweepStart: f.applyStart,
		entryRound:      f.applyRound,
		entrySweepEnd:   f.applyEnd,
		entryRetestPlan: f.applyRetestPlan,
		entryRoundBin:   f.applyRoundBin,
	}[entryType(l.Data[0])]
	if !ok {
		panic(fmt.Sprintf("fsm: unknown entry type %d at index %d", l.Data[0], l.Index))
	}
	if err := handler(l.Data[1:]); err != nil {
		panic(fmt.Sprintf("fsm: entry %d at index %d: %v", l.Data[0], l.Index, err))
	}
	return nil
}

func (f *fsm) applyStart(b []byte) error {
	var s sweepStart
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

func (f *fsm) applyRound(b []byte) error {
	var r roundResult
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
func (f *fsm) roundDone(rec *sweepRecord, round int, retest bool) {
	rec.Rounds[round] = true
	f.seq++
	rec.Version = f.seq
	rec.Info.RoundsDone = len(rec.Rounds)
	if !retest {
		rec.Info.CellsDone = rec.Cells.len()
	}
}

func (f *fsm) applyRetestPlan(b []byte) error {
	var p retestPlan
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

func newRecord(info api.SweepInfo, spec sweepSpec, nodes []matrix.Node) *sweepRecord {
	return &sweepRecord{Info: info, Spec: spec, Nodes: nodes, Cells: newCellStore(nodes), Rounds: map[int]bool{},
		Retests: map[int]retestPlan{}}
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

func (f *fsm) applyEnd(b []byte) error {
	var e sweepEnd
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

// snapshotState is the serialised form of the FSM.
type snapshotState struct {
	Sweeps []snapshotSweep `json:"sweeps"`
}

type snapshotSweep struct {
	Info    api.SweepInfo `json:"info"`
	Spec    sweepSpec     `json:"spec"`
	Nodes   []matrix.Node `json:"nodes"`
	Cells   []matrix.Cell `json:"cells,omitempty"` // JSON snapshots only
	Rounds  []int         `json:"rounds"`
	Retests []retestPlan  `json:"retests,omitempty"`
}

// Snapshot captures the state on the FSM goroutine: record headers are
// copied and cell stores frozen (copy-on-write), so Persist can stream them
// while Apply goes on. See snapshot.go for the format.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
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
func (f *fsm) Restore(rc io.ReadCloser) error {
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

// Read helpers, safe to call from any goroutine.

func (f *fsm) sweepInfos() []api.SweepInfo {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := make([]api.SweepInfo, 0, len(f.order))
	for i := len(f.order) - 1; i >= 0; i-- {
		out = append(out, f.sweeps[f.order[i]].Info)
	}
	return out
}

func (f *fsm) sweepInfo(id string) (api.SweepInfo, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	rec, ok := f.sweeps[id]
	if !ok {
		return api.SweepInfo{}, false
	}
	return rec.Info, true
}

// sweepGrid copies one sweep's header, spec and nodes, and freezes its
// cells for matrix.BuildFrom to read one at a time outside the lock, so a
// reader of a big sweep does not hold up Apply while it analyses.
func (f *fsm) sweepGrid(id string) (sweepView, *gridSource, bool) {
	f.mu.Lock() // freeze bumps the store's epoch
	defer f.mu.Unlock()
	rec, ok := f.sweeps[id]
	if !ok {
		return sweepView{}, nil, false
	}
	return f.meta(rec), newGridSource(rec.Cells.freeze()), true
}

// sweepMeta is sweepGrid without the cells.
func (f *fsm) sweepMeta(id string) (sweepView, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	rec, ok := f.sweeps[id]
	if !ok {
		return sweepView{}, false
	}
	return f.meta(rec), true
}

func (f *fsm) meta(rec *sweepRecord) sweepView {
	rounds := make(map[int]bool, len(rec.Rounds))
	for r := range rec.Rounds {
		rounds[r] = true
	}
	retests := make(map[int]retestPlan, len(rec.Retests))
	for p, plan := range rec.Retests {
		retests[p] = plan
	}
	return sweepView{Version: rec.Version, Info: rec.Info, Spec: rec.Spec, Nodes: slices.Clone(rec.Nodes),
		Rounds: rounds, Retests: retests}
}

// sweepView is a copy of one sweep, safe to use without the FSM lock.
type sweepView struct {
	Version uint64
	Info    api.SweepInfo
	Spec    sweepSpec
	Nodes   []matrix.Node
	Cells   []matrix.Cell // decoded by the tests' sweepData; the analysis reads the grid
	Rounds  map[int]bool
	Retests map[int]retestPlan
}

// version is a sweep's record version, without copying the record.
func (f *fsm) version(id string) (uint64, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	rec, ok := f.sweeps[id]
	if !ok {
		return 0, false
	}
	return rec.Version, true
}

// running returns the IDs of sweeps not yet ended, oldest first.
func (f *fsm) running() []string {
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
