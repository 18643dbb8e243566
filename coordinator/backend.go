package coordinator

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/store"
	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// The methods here are what web.Backend asks for; web declares the interface.

// Nodes lists every member this coordinator has seen.
func (c *Coordinator) Nodes() []api.NodeInfo { return c.reg.list() }

// Sweeps lists the kept sweeps, newest first.
func (c *Coordinator) Sweeps() []api.SweepInfo { return c.fsm.Infos() }

// Sweep returns one sweep's header.
func (c *Coordinator) Sweep(id string) (api.SweepInfo, bool) { return c.fsm.Info(id) }

// Matrix analyses a sweep as it stands, finished or not. The UI polls every
// second and metrics scrape too, so the analysis is kept until the sweep's
// record changes; callers must not mutate the result (web's contract).
//
// A running sweep's record changes every round, and its analysis takes
// seconds at 1,024 x 8 (7.5 s here): rebuilt for every poll of a live
// heatmap it would take a core from the sweep itself. So while a sweep runs,
// readers get its last analysis until that is older than liveMatrixAge of
// what it took to build; the leader's own decisions use freshMatrix.
func (c *Coordinator) Matrix(id string) (*matrix.Matrix, bool) { return c.matrix(id, true) }

// freshMatrix analyses the committed record as it is: the leader decides
// `healthy` and the retest pairs from it.
func (c *Coordinator) freshMatrix(id string) (*matrix.Matrix, bool) { return c.matrix(id, false) }

func (c *Coordinator) matrix(id string, live bool) (*matrix.Matrix, bool) {
	c.matrixMu.Lock()
	defer c.matrixMu.Unlock()
	v, ok := c.fsm.Version(id)
	if !ok {
		return nil, false
	}
	if m, ok := c.matrices[id]; ok {
		if m.version == v || live && !c.fsm.Ended(id) && time.Since(m.built) < liveMatrixAge(m.took) {
			return m.m, true
		}
	}
	sv, grid, ok := c.fsm.Grid(id)
	if !ok {
		return nil, false
	}
	delete(c.matrices, id) // a stale analysis must not add to the rebuild's peak
	start := time.Now()
	// Compact: a byte a cell beside the frozen grid it reads again for the
	// cells a reader asks for (the grid shares the store's blocks).
	topo := c.sweepTopology(sv.Info.Topology)
	var tr *matrix.Traced
	if paths := c.fsm.Paths(id); topo != nil && len(paths) > 0 {
		// None mapped (parallel cables, switches answering from addresses
		// the plan lacks): the model routes, rather than nothing.
		if tr, _ = c.tracedOf(topo, paths); tr.Len() == 0 {
			tr = nil
		}
	}
	m := matrix.AnalyseTraced(topo, tr, sv.Nodes, grid, grid.ExtraCells(), c.thresholds(sv.Spec))
	evictMatrices(c.matrices, analysedCells(m), matrixCacheCells)
	c.matrices[id] = cachedMatrix{version: sv.Version, m: m, built: time.Now(), took: time.Since(start)}
	return m, true
}

// liveMatrixAge is how long a running sweep's analysis is served after a
// build that took took: four times as long, so live readers cost the
// coordinator at most a fifth of a core whatever the fabric's size. Small
// sweeps build in milliseconds and stay live to the round.
func liveMatrixAge(took time.Duration) time.Duration { return 4 * took }

// matrixCacheCells bounds the analysed cells the cache keeps beside a new
// one. A compact analysis is a byte a cell, but it keeps its sweep's frozen
// grid alive (17 bytes a cell, shared with the store until the store
// changes or drops the sweep), so past this only the newest analysis stays.
const matrixCacheCells = 10_000_000

// evictMatrices makes room for an analysis of n cells: a few sweeps are
// looked at, so up to three others stay while all of them fit budget.
func evictMatrices(cache map[string]cachedMatrix, n, budget int) {
	total := n
	for _, m := range cache {
		total += analysedCells(m.m)
	}
	if len(cache) >= 4 || total > budget {
		clear(cache)
	}
}

func analysedCells(m *matrix.Matrix) int { return m.NumCells() + len(m.Cross) }

type cachedMatrix struct {
	version uint64
	m       *matrix.Matrix
	built   time.Time     // when the analysis finished
	took    time.Duration // what it took
}

// StartSweep commits a new sweep and hands it to the leader loop.
func (c *Coordinator) StartSweep(ctx context.Context, req api.SweepRequest) (api.SweepInfo, error) {
	c.mu.Lock()
	if !c.leading {
		c.mu.Unlock()
		return c.forwardStart(ctx, req)
	}
	// A sweep whose end is committed no longer counts, even if its leader
	// goroutine has not yet let go of it: a client that saw "done" may
	// start the next one at once.
	if c.active != "" && !c.fsm.Ended(c.active) {
		id := c.active
		c.mu.Unlock()
		return api.SweepInfo{}, &conflictError{msg: "sweep " + id + " is still running; wait for it or watch GET /api/v1/sweeps/" + id}
	}
	c.active = "starting"
	c.mu.Unlock()
	info, err := c.startSweep(req)
	if err != nil {
		c.setActive("starting", false)
		return info, err
	}
	c.setActive(info.ID, true)
	select {
	case c.work <- info.ID:
	case <-ctx.Done():
		// The sweep is committed; a leader resumes it even if this hand-off
		// is abandoned.
	}
	return info, nil
}

func (c *Coordinator) startSweep(req api.SweepRequest) (api.SweepInfo, error) {
	spec, mode, resolved, err := sweep.Resolve(c.sweepDefaults(), req)
	if err != nil {
		return api.SweepInfo{}, err
	}
	nodes, err := sweep.SelectNodes(c.reg.list(), req)
	if err != nil {
		return api.SweepInfo{}, err
	}
	names := make([]string, len(nodes))
	rails := 0
	for i, n := range nodes {
		names[i] = n.Name
		rails = max(rails, len(n.Ports))
	}
	if spec.Pattern == sweep.PatternOneToAll && !slices.Contains(names, spec.Root) {
		return api.SweepInfo{}, sweep.BadRequest("root", fmt.Sprintf("%q is not one of the %d selected workers", spec.Root, len(names)))
	}
	// Committed first: the link patterns plan on it, and every leader that
	// runs the sweep re-plans on the version the sweep records.
	if err := c.commitTopology(); err != nil {
		return api.SweepInfo{}, sweep.Unavailable("cannot commit the fabric topology: " + err.Error())
	}
	planned, err := sweep.PlanSweep(spec, nodes, c.Topology())
	if err != nil {
		field := "nodes"
		if spec.Steered() {
			field = "pattern"
		}
		return api.SweepInfo{}, sweep.BadRequest(field, err.Error())
	}
	rounds := planned.Rounds
	if lp := planned.Links; lp != nil {
		c.logLinkPlan(lp)
	}
	now := time.Now().UTC()
	info := api.SweepInfo{ID: sweep.NewID(now), State: api.SweepRunning, Mode: mode, Nodes: names, Rails: rails,
		Rounds: len(rounds), Cells: sweep.CountCells(spec, nodes, rounds), Started: now, Spec: &resolved}
	entry, err := store.EncodeStart(store.Start{Info: info, Spec: spec, Nodes: nodes})
	if err != nil {
		return api.SweepInfo{}, sweep.BadRequest("nodes", err.Error())
	}
	if err := c.apply(entry); err != nil {
		return api.SweepInfo{}, sweep.Unavailable("cannot commit the sweep: " + err.Error())
	}
	c.memoryCheck(info.ID)
	return info, nil
}

// Error kinds web maps to HTTP statuses by behaviour, without importing us;
// request and unavailable errors are the sweep package's.

type conflictError struct{ msg string }

func (e *conflictError) Error() string  { return e.msg }
func (e *conflictError) Conflict() bool { return true }

func (c *Coordinator) sweepDefaults() sweep.Defaults {
	o := &c.opts
	return sweep.Defaults{Params: o.Params, PairTimeout: o.PairTimeout, Mode: o.Mode, Pattern: o.Pattern, BatchSize: o.BatchSize,
		RailMode: o.RailMode, Budget: o.Budget, Retests: o.Retests, Profile: o.Profile, Profiles: o.Profiles}
}

// thresholds are the rules a sweep is judged by: its profile's, or the
// coordinator's, with the configured baseline.
func (c *Coordinator) thresholds(spec sweep.Spec) matrix.Thresholds {
	th := c.opts.Thresholds
	if p, ok := c.opts.Profiles[spec.Profile]; ok {
		th = p
	}
	th.TestedOnly = spec.TestedOnly()
	th.SteeredLinks = spec.Steered()
	if b := c.opts.Baseline; b != nil {
		th.Baseline, th.BaselineName = b, b.Name
	}
	return th
}
