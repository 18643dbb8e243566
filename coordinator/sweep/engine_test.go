package sweep

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

func TestEngineWholeSweep(t *testing.T) {
	h := newHarness(t, 5, 2, Spec{PairTimeout: time.Second, RailMode: "same", Retests: 2})
	h.run(context.Background())
	h.checkComplete()
	if !h.ended || h.state != api.SweepDone || h.healthy == nil || !*h.healthy {
		t.Fatalf("ended %v state %q healthy %v msg %q; want done and healthy", h.ended, h.state, h.healthy, h.msg)
	}
	if len(h.plans) != 0 {
		t.Fatalf("%d retest plans for a clean fabric", len(h.plans))
	}
}

// The leader loses office in the middle of round 2: its runner stops
// without committing that round, and the next leader's runner starts at
// round 2 from the committed record, re-running nothing that landed.
func TestEngineResumesAfterLeaderChange(t *testing.T) {
	h := newHarness(t, 6, 1, Spec{PairTimeout: time.Second, RailMode: "same"})
	ctx, cancel := context.WithCancel(context.Background())
	h.beforePhase = func(t Task) {
		if t.Round == 2 {
			cancel()
		}
	}
	h.run(ctx)
	if h.ended {
		t.Fatalf("the old leader ended the sweep (%s: %s)", h.state, h.msg)
	}
	if h.commits[0] != 1 || h.commits[1] != 1 || h.commits[2] != 0 {
		t.Fatalf("commits after the old leader %v; want rounds 0 and 1 only", h.commits)
	}
	before := map[int]int{0: h.rounds[0], 1: h.rounds[1]}
	h.beforePhase = nil
	// A commit of the new leader fails too (it lost office in turn): the
	// round is re-run by the runner after it.
	h.failCommit[3] = true
	h.run(context.Background())
	if h.ended {
		t.Fatal("a runner whose commit failed ended the sweep")
	}
	h.run(context.Background())
	h.checkComplete()
	if h.rounds[0] != before[0] || h.rounds[1] != before[1] {
		t.Fatalf("committed rounds were dispatched again: %v, had %v", h.rounds, before)
	}
	if !h.ended || h.state != api.SweepDone {
		t.Fatalf("state %q %q after the new leaders", h.state, h.msg)
	}
}

// A worker that vanished mid-sweep yields peer-lost cells for every
// direction it is in; the sweep goes on and judges the fabric unhealthy.
func TestEngineLostWorker(t *testing.T) {
	h := newHarness(t, 4, 2, Spec{PairTimeout: time.Second, RailMode: "same", Retests: 1})
	for _, n := range []string{"n0", "n1", "n2"} {
		h.outcomes[n+">n3"] = []probe.Class{probe.ClassPeerLost}
		h.outcomes["n3>"+n] = []probe.Class{probe.ClassPeerLost}
	}
	h.run(context.Background())
	h.checkComplete()
	if !h.ended || h.state != api.SweepDone || h.healthy == nil || *h.healthy {
		t.Fatalf("state %q healthy %v; want done and unhealthy", h.state, h.healthy)
	}
	lost := 0
	for _, c := range h.cells {
		if c.Class == probe.ClassPeerLost {
			lost++
			if c.Src != "n3" && c.Dst != "n3" {
				t.Fatalf("peer-lost cell %s → %s without the lost worker", c.Src, c.Dst)
			}
		}
	}
	if lost != 3*2*2 {
		t.Fatalf("%d peer-lost cells; want both directions of 3 pairs on 2 rails", lost)
	}
	if len(h.plans) != 0 {
		t.Fatalf("a lost worker was retested: %+v (nothing to confirm, it is a node fault)", h.plans)
	}
}

// A pair that times out is confirmed pass by pass: each pass's plan is
// committed before it runs, its rounds are numbered after the main ones,
// and each retest adds an attempt to the cells instead of replacing them.
func TestEngineRetests(t *testing.T) {
	h := newHarness(t, 6, 1, Spec{PairTimeout: time.Second, RailMode: "same", Retests: 2})
	h.outcomes["n1>n2"] = []probe.Class{probe.ClassTimeout, probe.ClassTimeout, probe.ClassRetryExceeded}
	main := h.rec.Info.Rounds
	h.run(context.Background())
	if !h.ended || h.state != api.SweepDone {
		t.Fatalf("state %q %q", h.state, h.msg)
	}
	if len(h.plans) != 2 {
		t.Fatalf("%d retest passes; want 2", len(h.plans))
	}
	next := main
	for i, p := range h.plans {
		if p.Pass != i+1 || p.Pairs != 1 || len(p.Rounds) != 1 || p.Rounds[0].Pairs[0].A != "n1" || p.Rounds[0].Pairs[0].B != "n2" {
			t.Fatalf("pass %d plan %+v; want the pair n1-n2 alone", i+1, p)
		}
		if p.Rounds[0].Index != next {
			t.Fatalf("pass %d round index %d; want %d", p.Pass, p.Rounds[0].Index, next)
		}
		next++
		if h.commits[p.Rounds[0].Index] != 1 {
			t.Fatalf("retest round %d committed %d times", p.Rounds[0].Index, h.commits[p.Rounds[0].Index])
		}
	}
	c := h.cells["n1>n2/0"]
	if c.Class != probe.ClassTimeout || len(c.Retests) != 2 || c.Retests[1].Class != probe.ClassRetryExceeded {
		t.Fatalf("n1 → n2: %s with attempts %+v; want the first timeout kept and two attempts added", c.Class, c.Retests)
	}
	if h.rec.Info.Rounds != main+2 || h.rec.Info.Retested != 2 {
		t.Fatalf("info %+v", h.rec.Info)
	}
}

// The budget counts from the committed start: past it, no further round
// starts and the sweep fails naming the budget; during confirmation it
// only cuts the retests short.
func TestEngineTimeBudget(t *testing.T) {
	t.Run("main rounds", func(t *testing.T) {
		h := newHarness(t, 6, 1, Spec{PairTimeout: time.Second, RailMode: "same", Budget: 20 * time.Second})
		h.beforePhase = func(Task) { h.clock = h.clock.Add(time.Second) } // a round of 3 pairs: 6 s
		h.run(context.Background())
		if !h.ended || h.state != api.SweepFailed || !strings.Contains(h.msg, "time budget 20s exceeded after 4 of 5") {
			t.Fatalf("state %q msg %q; want failed on the budget", h.state, h.msg)
		}
		if n := len(h.rec.Rounds); n != 4 || h.rounds[4] != 0 {
			t.Fatalf("%d rounds committed, round 4 dispatched %d times; want the budget to stop the sweep before round 4", n, h.rounds[4])
		}
	})
	t.Run("retests", func(t *testing.T) {
		h := newHarness(t, 6, 1, Spec{PairTimeout: time.Second, RailMode: "same", Retests: 2, Budget: time.Minute})
		h.outcomes["n1>n2"] = []probe.Class{probe.ClassTimeout}
		h.beforePhase = func(t Task) {
			if t.Round >= 5 { // the first retest pass eats the rest of the budget
				h.clock = h.clock.Add(time.Hour)
			}
		}
		h.run(context.Background())
		// Pass 2 is planned (and committed, for a new leader to see) but
		// finds the budget spent before its round.
		if !h.ended || h.state != api.SweepDone || len(h.plans) != 2 || h.commits[5] != 1 || h.rounds[6] != 0 {
			t.Fatalf("state %q msg %q, %d passes, commits %v; want done after the one pass the budget allowed", h.state, h.msg, len(h.plans), h.commits)
		}
	})
}

// A tester cell (a worker short of its own resources) ends the sweep failed
// at once: the round is kept, no further round is dispatched, and the
// message says the fabric was not judged.
func TestEngineTesterFault(t *testing.T) {
	h := newHarness(t, 6, 1, Spec{PairTimeout: time.Second, RailMode: "same"})
	var tester string
	h.beforePhase = func(t Task) {
		if t.Round == 1 && tester == "" {
			tester = t.Src.Name + ">" + t.Dst.Name
			h.outcomes[tester] = []probe.Class{probe.ClassTester}
		}
	}
	h.run(context.Background())
	if !h.ended || h.state != api.SweepFailed || !strings.HasPrefix(h.msg, "tester fault") {
		t.Fatalf("state %q msg %q; want failed with a tester fault", h.state, h.msg)
	}
	if h.commits[1] != 1 || h.rounds[2] != 0 {
		t.Fatalf("commits %v dispatched %v; want round 1 kept and nothing after it run", h.commits, h.rounds)
	}
	var m *matrix.Matrix
	if m, _ = h.Matrix("s"); m.Healthy {
		t.Fatal("a tester fault left a healthy matrix")
	}
}
