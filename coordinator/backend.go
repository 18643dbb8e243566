package coordinator

import (
	"context"
	"fmt"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// The methods here are what web.Backend asks for; web declares the interface.

// Nodes lists every member this coordinator has seen.
func (c *Coordinator) Nodes() []api.NodeInfo { return c.reg.list() }

// Sweeps lists the kept sweeps, newest first.
func (c *Coordinator) Sweeps() []api.SweepInfo { return c.fsm.sweepInfos() }

// Sweep returns one sweep's header.
func (c *Coordinator) Sweep(id string) (api.SweepInfo, bool) { return c.fsm.sweepInfo(id) }

// Matrix analyses a sweep as it stands, finished or not. The UI polls every
// second and metrics scrape too, so the analysis is kept until the sweep's
// record changes; callers must not mutate the result (web's contract).
func (c *Coordinator) Matrix(id string) (*matrix.Matrix, bool) {
	c.matrixMu.Lock()
	defer c.matrixMu.Unlock()
	if v, ok := c.fsm.version(id); !ok {
		return nil, false
	} else if m, ok := c.matrices[id]; ok && m.version == v {
		return m.m, true
	}
	sv, ok := c.fsm.sweepData(id)
	if !ok {
		return nil, false
	}
	m := matrix.Build(sv.Nodes, sv.Cells, c.opts.Thresholds)
	if len(c.matrices) >= 4 { // a few sweeps are looked at; drop the rest
		clear(c.matrices)
	}
	c.matrices[id] = cachedMatrix{version: sv.Version, m: m}
	return m, true
}

type cachedMatrix struct {
	version uint64
	m       *matrix.Matrix
}

// StartSweep commits a new sweep and hands it to the leader loop.
func (c *Coordinator) StartSweep(ctx context.Context, req api.SweepRequest) (api.SweepInfo, error) {
	c.mu.Lock()
	if !c.leading {
		c.mu.Unlock()
		return c.forwardStart(ctx, req)
	}
	if c.active != "" {
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
	nodes, err := c.plan(req)
	if err != nil {
		return api.SweepInfo{}, err
	}
	spec := sweepSpec{Params: c.opts.Params, PairTimeout: c.opts.PairTimeout}
	mode := c.opts.Mode
	if req.Mode != "" {
		mode = req.Mode
	}
	if req.LatencyIters > 0 {
		spec.Params.LatencyIters = req.LatencyIters
	}
	if req.LatencySize > 0 {
		spec.Params.LatencySize = req.LatencySize
	}
	if req.BWSize > 0 {
		spec.Params.BWSize = req.BWSize
	}
	if req.BWIters > 0 {
		spec.Params.BWIters = req.BWIters
	}
	if mode == "quick" {
		spec.Params.BWSize = 0
	}
	if req.PairTimeout != "" {
		d, err := time.ParseDuration(req.PairTimeout)
		if err != nil || d <= 0 {
			return api.SweepInfo{}, &requestError{field: "pair_timeout", msg: fmt.Sprintf("%q is not a positive duration such as 10s", req.PairTimeout)}
		}
		spec.PairTimeout = d
	}
	if err := spec.Params.Validate(); err != nil {
		return api.SweepInfo{}, &requestError{field: "params", msg: err.Error()}
	}
	names := make([]string, len(nodes))
	rails := 0
	for i, n := range nodes {
		names[i] = n.Name
		rails = max(rails, len(n.Ports))
	}
	rounds, err := scheduler.AllPairs(names)
	if err != nil {
		return api.SweepInfo{}, &requestError{field: "nodes", msg: err.Error()}
	}
	cells := 0
	for i := range nodes {
		for j := range nodes {
			if i != j {
				cells += len(railPairs(nodes[i], nodes[j]))
			}
		}
	}
	now := time.Now().UTC()
	info := api.SweepInfo{ID: newSweepID(now), State: api.SweepRunning, Mode: mode, Nodes: names, Rails: rails,
		Rounds: len(rounds), Cells: cells, Started: now}
	if err := c.apply(entrySweepStart, sweepStart{Info: info, Spec: spec, Nodes: nodes}); err != nil {
		return api.SweepInfo{}, &unavailableError{msg: "cannot commit the sweep: " + err.Error()}
	}
	return info, nil
}

// Error kinds web maps to HTTP statuses by behaviour, without importing us.

type requestError struct{ field, msg string }

func (e *requestError) Error() string { return e.field + ": " + e.msg }
func (e *requestError) Field() string { return e.field }

type conflictError struct{ msg string }

func (e *conflictError) Error() string  { return e.msg }
func (e *conflictError) Conflict() bool { return true }

type unavailableError struct{ msg string }

func (e *unavailableError) Error() string     { return e.msg }
func (e *unavailableError) Unavailable() bool { return true }
