// Package store is the coordinator's replicated state: the raft FSM and
// its entry table (entry.go, fsm.go), round entries (round.go), the compact
// cell grid (cellstore.go, nodeindex.go, view.go), snapshots (snapshot.go)
// and the readers the analysis uses (read.go, gridsource.go,
// gridfigures.go). Entries and snapshots are internal/wire's records; the
// store keeps its state in those types and converts to the sweep engine's
// and the matrix's at its boundary (convert.go). It knows nothing of raft's
// wiring: Apply takes a *raft.Log and is tested as a plain function.
package store

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// EntryType is the first byte of every raft log entry; the FSM dispatches
// on it. The rest of the entry is one internal/wire message: its version
// byte, then its fields.
//
// An entry type this FSM does not know is one a newer coordinator wrote
// during a rolling upgrade. With the Ignorable bit set its writer declared
// that skipping it leaves the state every replica reads unchanged (a hint,
// a statistic), so an older follower logs it and goes on. Without the bit
// the entry changes the state, and applying everything else but it would
// let this replica silently diverge from the others: Apply panics instead,
// so the follower stops until it is upgraded (consul's FSM makes the same
// split with its IgnoreUnknownTypeFlag). A new entry type must therefore be
// ignorable unless every replica already reads it.
type EntryType byte

const (
	EntrySweepStart EntryType = 1 // wire.StartRecord
	EntryRound      EntryType = 2 // wire round entry (round.go)
	EntrySweepEnd   EntryType = 3 // wire.EndRecord
	EntryRetestPlan EntryType = 4 // wire.RetestPlanRecord
	// EntryLivePlan is the always-on mesh's plan (wire.LivePlanMsg). It is
	// ignorable: a replica that skips it has no live plan to continue and
	// its leader would make a new one, which is all the plan is for.
	EntryLivePlan = Ignorable | 5

	// Ignorable marks an entry type that an FSM which does not know it may
	// skip.
	Ignorable EntryType = 0x80
)

// handlers is the entry table, built once: Apply runs on every entry of a
// 1,024-node sweep, and a map literal per call was garbage per entry.
var handlers = map[EntryType]func(*FSM, []byte) error{
	EntrySweepStart: (*FSM).applyStart,
	EntryRound:      (*FSM).applyRound,
	EntrySweepEnd:   (*FSM).applyEnd,
	EntryRetestPlan: (*FSM).applyRetestPlan,
	EntryLivePlan:   (*FSM).applyLivePlan,
	// counters.go
	EntryRoundCounters: (*FSM).applyRoundCounters,
	// topology.go
	EntryTopology: (*FSM).applyTopology,
	// paths.go
	EntryPaths: (*FSM).applyPaths,
}

// Start is a new sweep as the coordinator commits it: its header, spec and
// nodes.
type Start struct {
	Info  api.SweepInfo
	Spec  sweep.Spec
	Nodes []matrix.Node
}

// End is a sweep's outcome.
type End struct {
	SweepID string
	State   string
	Error   string
	At      time.Time
	Healthy *bool
}

// EncodeStart is the entry of a new sweep; an error names a sweep too big
// for one grid, which every replica would refuse.
func EncodeStart(s Start) ([]byte, error) {
	nodes := nodesIn(s.Nodes)
	if err := wire.CheckGrid(nodes); err != nil {
		return nil, err
	}
	return wire.StartRecord.Append([]byte{byte(EntrySweepStart)}, &wire.SweepStart{Info: s.Info, Spec: specIn(s.Spec), Nodes: nodes}), nil
}

// EncodeEnd is the entry of a sweep's end.
func EncodeEnd(e End) []byte {
	return wire.EndRecord.Append([]byte{byte(EntrySweepEnd)},
		&wire.SweepEnd{SweepID: e.SweepID, State: e.State, Error: e.Error, At: e.At, Healthy: e.Healthy})
}

// EncodeLivePlan is the entry of the live mesh's plan.
func EncodeLivePlan(p wire.LivePlan) []byte {
	return wire.LivePlanMsg.Append([]byte{byte(EntryLivePlan)}, &p)
}

func (f *FSM) applyLivePlan(b []byte) error {
	p, err := wire.LivePlanMsg.Decode(b)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.livePlan = &p
	return nil
}

// LivePlan is the newest committed live plan, if any.
func (f *FSM) LivePlan() (wire.LivePlan, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.livePlan == nil {
		return wire.LivePlan{}, false
	}
	return *f.livePlan, true
}

// EncodeRetestPlan is the entry of a confirmation pass's plan.
func EncodeRetestPlan(p sweep.RetestPlan) []byte {
	return wire.RetestPlanRecord.Append([]byte{byte(EntryRetestPlan)}, new(planIn(&p)))
}

// FSM is the replicated state: the last keep sweeps and their cells.
type FSM struct {
	keep int
	log  *slog.Logger

	mu     sync.RWMutex
	seq    uint64 // bumped on every change; source of record versions
	sweeps map[string]*sweepRecord
	order  []string // oldest first
	// livePlan is the newest committed live plan, in snapshots too, so a
	// leader restored from one continues its numbering and windows.
	livePlan *wire.LivePlan

	kept keptRounds // round entries this replica encoded (kept.go)

	topos topologies // topology.go
}

// New returns an empty FSM keeping the last keep sweeps; log (nil: the
// default) hears of skipped entries.
func New(keep int, log *slog.Logger) *FSM {
	if keep < 1 {
		keep = 1
	}
	if log == nil {
		log = slog.Default()
	}
	return &FSM{keep: keep, log: log, sweeps: map[string]*sweepRecord{}}
}

// Apply implements raft.FSM. An entry that cannot be applied panics (see
// EntryType): a replica must stop rather than diverge.
func (f *FSM) Apply(l *raft.Log) any {
	if len(l.Data) == 0 {
		panic(fmt.Sprintf("fsm: empty log entry at index %d", l.Index))
	}
	t := EntryType(l.Data[0])
	handler, ok := handlers[t]
	switch {
	case !ok && t&Ignorable != 0:
		f.log.Warn("skipping a log entry of a type this coordinator does not know; it is marked ignorable (a newer coordinator wrote it)",
			"type", byte(t), "index", l.Index)
		return nil
	case !ok:
		panic(fmt.Sprintf("fsm: unknown entry type %d at index %d: upgrade this coordinator to the version the leader runs", l.Data[0], l.Index))
	}
	if err := handler(f, l.Data[1:]); err != nil {
		panic(fmt.Sprintf("fsm: entry %d at index %d: %v", l.Data[0], l.Index, err))
	}
	return nil
}
