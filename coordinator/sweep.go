package coordinator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/coordinator/store"
	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// runSweep runs every round of id that has no committed result yet, then
// the confirmation passes. It is also how a new leader resumes a sweep its
// predecessor left unfinished.
func (c *Coordinator) runSweep(ctx context.Context, id string) {
	defer c.setActive(id, false)
	c.setActive(id, true)
	sv, ok := c.fsm.Meta(id)
	if !ok {
		return
	}
	names := make([]string, len(sv.Nodes))
	byName := make(map[string]matrix.Node, len(sv.Nodes))
	for i, n := range sv.Nodes {
		names[i] = n.Name
		byName[n.Name] = n
	}
	rounds, err := sweep.PlanRounds(sv.Spec, names)
	if err != nil {
		c.endSweep(id, api.SweepFailed, err.Error(), nil)
		return
	}
	start := time.Now()
	r := roundRunner{c: c, ctx: ctx, id: id, sv: sv, nodes: byName, index: store.NewNodeIndex(sv.Nodes)}
	if sv.Spec.Budget > 0 {
		// From the committed start, so a new leader keeps the same budget.
		r.deadline = sv.Info.Started.Add(sv.Spec.Budget)
	}
	switch r.run(rounds) {
	case runStopped:
		return
	case runTesterFault:
		c.endSweep(id, api.SweepFailed, r.testerFault(), nil)
		return
	case runOverBudget:
		done, _ := c.fsm.Info(id)
		c.endSweep(id, api.SweepFailed, fmt.Sprintf("time budget %s exceeded after %d of %d rounds: raise the budget, "+
			"select fewer nodes (hosts, labels) or use pattern k-batch / mode quick", sv.Spec.Budget, done.RoundsDone, len(rounds)), nil)
		return
	}
	if !r.confirm() {
		return
	}
	analysed := time.Now()
	m, _ := c.freshMatrix(id)
	healthy := m != nil && m.Healthy
	analysis := time.Since(analysed)
	c.endSweep(id, api.SweepDone, "", &healthy)
	info, _ := c.fsm.Info(id)
	c.log.Info("sweep done", "sweep", id, "nodes", len(names), "rounds", info.Rounds, "retested_pairs", info.Retested,
		"healthy", healthy, "elapsed", time.Since(start).Round(time.Millisecond), "analysis", analysis.Round(time.Millisecond))
}

type runOutcome int

const (
	runDone runOutcome = iota
	runStopped
	runOverBudget
	runTesterFault // a worker or this coordinator ran out of its own resources
)

// roundRunner runs and commits rounds of one sweep on this leader.
type roundRunner struct {
	c        *Coordinator
	ctx      context.Context
	id       string
	sv       store.View
	nodes    map[string]matrix.Node
	index    store.NodeIndex // encodes rounds compactly (codec.go)
	deadline time.Time       // zero: no budget
	tester   *probe.Error
}

// run runs rounds and commits each as one raft entry; commits overlap the
// next round's dispatch (pipeline.go), and run returns only once every
// round it ran is committed or has failed to be.
func (r *roundRunner) run(rounds []scheduler.Round) (out runOutcome) {
	com := r.c.startCommitter(&r.index)
	pool := newPairPool(r.c.opts.Parallelism)
	defer pool.stop()
	defer func() {
		if com.finish() != nil {
			out = runStopped
		}
	}()
	for _, rd := range rounds {
		if r.sv.Rounds[rd.Index] {
			continue
		}
		if com.failed() != nil {
			return runStopped
		}
		if !r.deadline.IsZero() && time.Now().After(r.deadline) {
			return runOverBudget
		}
		t0 := time.Now()
		cells := r.c.runRound(r.ctx, pool, r.id, r.sv.Spec, r.nodes, rd)
		if r.ctx.Err() != nil {
			r.c.log.Info("sweep interrupted; the next leader resumes it", "sweep", r.id, "round", rd.Index)
			return runStopped
		}
		com.submit(sweep.RoundResult{SweepID: r.id, Round: rd.Index, Cells: cells}, time.Since(t0))
		if r.tester = testerCell(cells); r.tester != nil {
			// Nothing measured from here on could be told from our own
			// fault, and more rounds would only add to the shortage.
			return runTesterFault
		}
	}
	return runDone
}

// testerCell is the first tester-fault error among cells, if any.
func testerCell(cells []matrix.Cell) *probe.Error {
	for i := range cells {
		if cells[i].Class == probe.ClassTester && cells[i].Error != nil {
			return cells[i].Error
		}
	}
	return nil
}

// testerFault is the sweep's end message after a tester fault: the round
// it struck, what ran out and the fix. It starts with "tester fault" so
// scripts can tell it from a fabric verdict.
func (r *roundRunner) testerFault() string {
	return fmt.Sprintf("tester fault, the fabric was not judged: %s. Fix: %s", strings.TrimPrefix(r.tester.Cause, "tester fault, not the fabric: "), r.tester.Fix)
}

// confirm runs the confirmation passes (ClusterKit style): retest the pairs
// with a suspect cell, then those still suspect, and so on. Each pass's
// plan is committed before it runs. Out of budget, confirmation stops and
// the sweep is judged on what it has: the main rounds all measured. It
// returns false when this leader must stop.
func (r *roundRunner) confirm() bool {
	for pass := 1; pass <= r.sv.Spec.Retests; pass++ {
		plan, ok := r.sv.Retests[pass]
		if !ok {
			m, _ := r.c.freshMatrix(r.id)
			if m == nil {
				return true
			}
			pairs := sweep.RetestPairs(m, pass)
			if len(pairs) == 0 {
				return true
			}
			rounds, err := scheduler.Retest(pairs)
			if err != nil {
				r.c.log.Warn("cannot plan retests; judging without them", "sweep", r.id, "err", err)
				return true
			}
			info, _ := r.c.fsm.Info(r.id)
			for i := range rounds {
				rounds[i].Index = info.Rounds + i
			}
			plan = sweep.RetestPlan{SweepID: r.id, Pass: pass, Rounds: rounds, Pairs: len(pairs)}
			if err := r.c.apply(store.EntryRetestPlan, plan); err != nil {
				r.c.log.Warn("cannot commit a retest plan; the next leader resumes it", "sweep", r.id, "err", err)
				return false
			}
			r.c.log.Info("retesting suspect pairs", "sweep", r.id, "pass", pass, "pairs", len(pairs), "rounds", len(rounds))
		}
		switch r.run(plan.Rounds) {
		case runStopped:
			return false
		case runTesterFault:
			r.c.endSweep(r.id, api.SweepFailed, r.testerFault(), nil)
			return false
		case runOverBudget:
			r.c.log.Warn("time budget reached during retests; judging on the retests done", "sweep", r.id, "pass", pass)
			return true
		}
	}
	return true
}

func (c *Coordinator) endSweep(id, state, msg string, healthy *bool) {
	if err := c.apply(store.EntrySweepEnd, store.End{SweepID: id, State: state, Error: msg, At: time.Now().UTC(), Healthy: healthy}); err != nil {
		c.log.Warn("cannot commit sweep end", "sweep", id, "err", err)
	}
}

func (c *Coordinator) setActive(id string, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case on:
		c.active = id
	case c.active == id:
		c.active = ""
	}
}

// runRound tests every pair of one round at once (bounded by Parallelism,
// the size of pool): the pairs are disjoint, so no HCA is in two tests.
// Within a pair the two directions run one after the other, so bandwidth is
// never shared.
func (c *Coordinator) runRound(ctx context.Context, pool *pairPool, id string, spec sweep.Spec, nodes map[string]matrix.Node, rd scheduler.Round) []matrix.Cell {
	return pool.run(&roundWork{c: c, ctx: ctx, id: id, spec: spec, nodes: nodes, rd: rd})
}

func newSweepID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}
