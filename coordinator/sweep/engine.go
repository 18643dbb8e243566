// Package sweep is the sweep engine: it resolves a request into a Spec,
// picks the nodes, plans rounds, dispatches each pair's directions, commits
// round by round, confirms suspects and keeps the time budget. It reaches
// the workers, the log and the committed state only through the Dispatcher,
// Committer and View it declares, so it runs without HTTP or raft (see
// harness_test.go).
package sweep

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/linkplan"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/topology"
)

// Dispatcher runs one phase of a pair on the workers: the coordinator's is
// one call to the source worker, which runs src → dst and then has dst run
// the reverse. It appends one cell per rail of t.Rails, then one per rail
// of t.Reverse, to out, whatever happens: an unreachable or hung worker
// becomes peer-lost or timeout cells, never a stuck sweep.
type Dispatcher interface {
	Phase(ctx context.Context, out []matrix.Cell, t Task) []matrix.Cell
}

// Task is one phase to dispatch: src → dst on rails that can all run at
// once (no HCA twice) and that both ends can test, then, when Reverse is
// not empty, dst → src on those rails (cells with Dst as their source).
// Rails is never empty. Rails and Reverse are valid only during the
// Phase call (the engine reuses their space for the next pair).
type Task struct {
	SweepID  string
	Round    int
	Spec     *Spec
	Src, Dst matrix.Node
	// SrcIndex and DstIndex are Src's and Dst's positions in the sweep's
	// start record (-1: not in it), for a dispatcher that keeps what it
	// looks up of a node in a table for the sweep. A Task built without
	// them names position 0 for both: a dispatcher must check the name
	// it finds there (the coordinator's does).
	SrcIndex, DstIndex int
	Rails              []probe.RailPair
	Reverse            []probe.RailPair
	// Figures, when not nil, is room for the latency figures of the cells
	// the phase appends (one per rail of Rails and Reverse), owned by the
	// round like its cells, so that a dispatcher need not allocate them.
	// Codes, in step with it, is room for their codes when the workers
	// send them (matrix.Cell.LatencyCodes).
	Figures []probe.Latency
	Codes   [][7]uint16
	// Lite, when not nil, takes the phase's plain cells (LiteCell) in
	// place of the cells Phase would append for them; a dispatcher may
	// ignore it and append every cell.
	Lite *[]LiteCell
}

// Committer makes the engine's results durable (on the coordinator: raft
// entries). A failed commit means this runner must stop; the next leader
// re-runs whatever did not land.
type Committer interface {
	// CommitRound starts committing one round's cells as a unit and
	// returns wait, which returns once the round is committed (or has
	// failed to be) and says how many bytes the entry took. It must not
	// keep r.Cells or r.Lite, or what they point to, once it returns: the
	// engine reuses that space (Pool.Round). The next round's CommitRound may
	// come before this one's wait is called: rounds are handed to raft in
	// the order their CommitRound came, and a round whose commit failed
	// may be followed by one that committed (raft took it after the
	// first timed out waiting to be enqueued). Nothing is lost by that: a
	// new leader re-runs each uncommitted round by its index.
	CommitRound(r RoundResult) (wait func() (int, error))
	CommitRetestPlan(p RetestPlan) error
	EndSweep(id, state, msg string, healthy *bool) error
}

// View is what is committed, read-only. A round committed through
// Committer shows in Record and Info once its wait has returned.
type View interface {
	Record(id string) (Record, bool)
	Info(id string) (api.SweepInfo, bool)
	// Matrix analyses the committed record as it is now: the engine decides
	// `healthy` and the retest pairs from it.
	Matrix(id string) (*matrix.Matrix, bool)
}

// PathTracer traces the flows of a sweep's measured cells and commits
// their paths, between its last round and its verdict (the coordinator's:
// the workers' POST /v1/trace and a raft entry). It must return by ctx's
// end and never fails the sweep.
type PathTracer interface {
	TracePaths(ctx context.Context, id string)
}

// LinkSteerer checks a link sweep's flow labels against the paths the
// fabric really takes, before its rounds (the coordinator's: it traces
// each test's candidate labels from its source and commits the trace of
// the one chosen). It sets plan's labels from what is committed, so
// every leader runs the same; fresh says no round has run yet, so it may
// trace. It must return by ctx's end and never fails the sweep.
type LinkSteerer interface {
	SteerLinks(ctx context.Context, id string, plan *linkplan.Plan, fresh bool)
}

// Engine runs sweeps on a leader. One Run at a time.
type Engine struct {
	View     View
	Commit   Committer
	Dispatch Dispatcher
	Paths    PathTracer  // nil: no paths are traced
	Steer    LinkSteerer // nil: link sweeps run on the plan's labels
	// Topology is the fabric topology of a version (SweepInfo.Topology),
	// which the link patterns plan on; nil, or nil for a version: none.
	Topology    func(version string) *topology.Topology
	Parallelism int // pairs of a round at once; 0 = all
	Log         *slog.Logger
	// OnRound, when set, sees each committed round's timing. It runs on the
	// commit goroutine: it must not block.
	OnRound func(RoundTiming)
	// Now is the clock the time budget is kept by (nil: time.Now).
	Now func() time.Time
}

func (e *Engine) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

func (e *Engine) log() *slog.Logger {
	if e.Log == nil {
		return slog.Default()
	}
	return e.Log
}

// Run runs every round of sweep id that has no committed result yet, then
// the confirmation passes, then commits the sweep's end. It is also how a
// new leader resumes a sweep its predecessor left unfinished: everything
// it needs is in the committed record. It returns when ctx ends (the sweep
// left to the next leader), when a commit fails, or when the sweep ended.
func (e *Engine) Run(ctx context.Context, id string) {
	rec, ok := e.View.Record(id)
	if !ok {
		return
	}
	names := make([]string, len(rec.Nodes))
	for i, n := range rec.Nodes {
		names[i] = n.Name
	}
	var topo *topology.Topology
	if e.Topology != nil && rec.Info.Topology != "" {
		topo = e.Topology(rec.Info.Topology)
	}
	planned, err := PlanSweep(rec.Spec, rec.Nodes, topo)
	if err != nil {
		e.end(id, api.SweepFailed, err.Error(), nil)
		return
	}
	if planned.Links != nil && e.Steer != nil {
		// In place: the rounds' Steer entries are the plan's.
		e.Steer.SteerLinks(ctx, id, planned.Links, len(rec.Rounds) == 0)
		if ctx.Err() != nil {
			return
		}
	}
	rounds := planned.Rounds
	start := time.Now()
	r := roundRunner{e: e, ctx: ctx, id: id, rec: rec, nodes: NewNodes(rec.Nodes), steer: newSteering(planned)}
	if rec.Spec.Budget > 0 {
		// From the committed start, so a new leader keeps the same budget.
		r.deadline = rec.Info.Started.Add(rec.Spec.Budget)
	}
	switch r.run(rounds) {
	case runStopped:
		return
	case runTesterFault:
		e.end(id, api.SweepFailed, r.testerFault(), nil)
		return
	case runOverBudget:
		done, _ := e.View.Info(id)
		e.end(id, api.SweepFailed, fmt.Sprintf("time budget %s exceeded after %d of %d rounds: raise the budget, "+
			"select fewer nodes (hosts, labels) or use pattern k-batch / mode quick", rec.Spec.Budget, done.RoundsDone, len(rounds)), nil)
		return
	}
	if !r.confirm() {
		return
	}
	if e.Paths != nil {
		e.Paths.TracePaths(ctx, id)
		if ctx.Err() != nil {
			return // the next leader traces and ends it
		}
	}
	analysed := time.Now()
	m, _ := e.View.Matrix(id)
	healthy := m != nil && m.Healthy
	analysis := time.Since(analysed)
	e.end(id, api.SweepDone, "", &healthy)
	info, _ := e.View.Info(id)
	e.log().Info("sweep done", "sweep", id, "nodes", len(names), "rounds", info.Rounds, "retested_pairs", info.Retested,
		"healthy", healthy, "elapsed", time.Since(start).Round(time.Millisecond), "analysis", analysis.Round(time.Millisecond))
}

func (e *Engine) end(id, state, msg string, healthy *bool) {
	if err := e.Commit.EndSweep(id, state, msg, healthy); err != nil {
		e.log().Warn("cannot commit sweep end", "sweep", id, "err", err)
	}
}

type runOutcome int

const (
	runDone runOutcome = iota
	runStopped
	runOverBudget
	runTesterFault // a worker or this coordinator ran out of its own resources
)
