package sweep

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// roundRunner runs and commits rounds of one sweep on this leader.
type roundRunner struct {
	e        *Engine
	ctx      context.Context
	id       string
	rec      Record
	nodes    *Nodes
	deadline time.Time // zero: no budget
	tester   *probe.Error
	steer    steering // a link sweep's pairs, retested on their paths
}

// run runs rounds and commits each as a unit; commits overlap the
// next round's dispatch (pipeline.go), and run returns only once every
// round it ran is committed or has failed to be.
func (r *roundRunner) run(rounds []scheduler.Round) (out runOutcome) {
	com := r.e.startCommitter()
	pool := NewPool(r.e.Parallelism)
	defer pool.Stop()
	defer func() {
		if com.finish() != nil {
			out = runStopped
		}
	}()
	for _, rd := range rounds {
		if r.rec.Rounds[rd.Index] {
			continue
		}
		if com.failed() != nil {
			return runStopped
		}
		if !r.deadline.IsZero() && r.e.now().After(r.deadline) {
			return runOverBudget
		}
		t0 := time.Now()
		cells, lite := pool.Round(r.ctx, r.e.Dispatch, r.id, &r.rec.Spec, r.nodes, rd)
		if r.ctx.Err() != nil {
			r.e.log().Info("sweep interrupted; the next leader resumes it", "sweep", r.id, "round", rd.Index)
			return runStopped
		}
		com.submit(RoundResult{SweepID: r.id, Round: rd.Index, Cells: cells, Lite: lite, Nodes: r.rec.Nodes}, time.Since(t0))
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
	for pass := 1; pass <= r.rec.Spec.Retests; pass++ {
		plan, ok := r.rec.Retests[pass]
		if !ok {
			m, _ := r.e.View.Matrix(r.id)
			if m == nil {
				return true
			}
			pairs := RetestPairs(m, pass)
			if len(pairs) == 0 {
				return true
			}
			rounds, err := scheduler.Retest(pairs)
			if err != nil {
				r.e.log().Warn("cannot plan retests; judging without them", "sweep", r.id, "err", err)
				return true
			}
			info, _ := r.e.View.Info(r.id)
			for i := range rounds {
				rounds[i].Index = info.Rounds + i
			}
			plan = RetestPlan{SweepID: r.id, Pass: pass, Rounds: rounds, Pairs: len(pairs)}
			if err := r.e.Commit.CommitRetestPlan(plan); err != nil {
				r.e.log().Warn("cannot commit a retest plan; the next leader resumes it", "sweep", r.id, "err", err)
				return false
			}
			r.e.log().Info("retesting suspect pairs", "sweep", r.id, "pass", pass, "pairs", len(pairs), "rounds", len(rounds))
		}
		for i := range plan.Rounds {
			r.steer.steer(&plan.Rounds[i])
		}
		switch r.run(plan.Rounds) {
		case runStopped:
			return false
		case runTesterFault:
			r.e.end(r.id, api.SweepFailed, r.testerFault(), nil)
			return false
		case runOverBudget:
			r.e.log().Warn("time budget reached during retests; judging on the retests done", "sweep", r.id, "pass", pass)
			return true
		}
	}
	return true
}
