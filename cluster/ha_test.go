package cluster

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// startHA runs 3 replicas and 6 workers whose tests take long enough
// (TimeScale) that a sweep can be interrupted in the middle.
func startHA(t *testing.T, seed int64) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := probe.DefaultTestParams()
	p.LatencyIters = 200
	cl, err := Start(ctx, Options{Nodes: 6, Rails: 2, Preset: "roce-2x100", Seed: seed, TimeScale: 40,
		Listen: "127.0.0.1:0", Mode: "full", Params: p, PairTimeout: 5 * time.Second, Coordinators: 3,
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	return cl
}

func TestLeaderKilledMidSweep(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		cl := startHA(t, seed)
		old := cl.Leader()
		info, err := old.StartSweep(context.Background(), api.SweepRequest{})
		if err != nil {
			t.Fatal(err)
		}
		wait.Within(t, 30*time.Second, "first round", func() bool {
			s, _ := old.Sweep(info.ID)
			return s.RoundsDone >= 1
		})
		killed := time.Now()
		cl.KillReplica(old)
		var next *Replica
		wait.Within(t, 15*time.Second, "a new leader", func() bool { next = cl.Leader(); return next != nil })
		failover := time.Since(killed)
		var final api.SweepInfo
		wait.Within(t, 60*time.Second, "the sweep to finish on the new leader", func() bool {
			final, _ = next.Sweep(info.ID)
			return final.State == api.SweepDone
		})
		m, _ := next.Matrix(info.ID)
		m = m.Materialize()
		if final.CellsDone != final.Cells || len(m.Cells) != final.Cells || m.Counts[matrix.VerdictOK] != final.Cells {
			t.Fatalf("seed %d: cells %d/%d, matrix %d, counts %v", seed, final.CellsDone, final.Cells, len(m.Cells), m.Counts)
		}
		t.Logf("seed %d: failover %s, sweep complete with %d/%d cells ok, 0 lost, 0 duplicated",
			seed, failover.Round(time.Millisecond), m.Counts[matrix.VerdictOK], final.Cells)
		cl.Stop()
	}
}

func TestWorkerKilledMidSweep(t *testing.T) {
	cl := startHA(t, 5)
	leader := cl.Leader()
	info, err := leader.StartSweep(context.Background(), api.SweepRequest{})
	if err != nil {
		t.Fatal(err)
	}
	wait.Within(t, 30*time.Second, "first round", func() bool {
		s, _ := leader.Sweep(info.ID)
		return s.RoundsDone >= 1
	})
	cl.Worker("node-05").Kill()
	wait.Within(t, 60*time.Second, "the sweep to finish", func() bool {
		s, _ := leader.Sweep(info.ID)
		return s.State == api.SweepDone
	})
	m, _ := leader.Matrix(info.ID)
	m = m.Materialize()
	lost := 0
	for _, c := range m.Cells {
		involved := c.Src == "node-05" || c.Dst == "node-05"
		switch {
		case c.Verdict == matrix.VerdictUntested:
			t.Fatalf("%s->%s untested: the sweep skipped a cell", c.Src, c.Dst)
		case !involved && c.Verdict != matrix.VerdictOK:
			t.Fatalf("%s->%s: %s (%s)", c.Src, c.Dst, c.Verdict, c.Reason)
		case involved && c.Class == probe.ClassPeerLost:
			lost++
		}
	}
	if lost == 0 || m.Suspects[0].Node != "node-05" {
		t.Fatalf("no peer-lost cells for the killed worker:\n%s", m.Summary())
	}
}

func TestMinorityAcceptsNoWrites(t *testing.T) {
	cl := startHA(t, 9)
	old := cl.Leader()
	cl.Partition(old)
	_, err := old.StartSweep(context.Background(), api.SweepRequest{})
	if err == nil {
		// It may still have forwarded to a new majority leader over HTTP;
		// then the write is the majority's, which is allowed. What must not
		// happen is the isolated node committing on its own.
		if !old.IsLeader() {
			t.Log("cut-off replica forwarded the write to the majority's leader")
		} else {
			t.Fatal("a replica cut off from the majority accepted a write as leader")
		}
	}
	var next *Replica
	wait.Within(t, 15*time.Second, "a majority leader", func() bool {
		next = cl.Leader()
		return next != nil && next != old
	})
	wait.Within(t, 15*time.Second, "the old leader to step down", func() bool { return !old.IsLeader() })
	if n := len(old.Sweeps()); n != 0 {
		t.Fatalf("the isolated replica holds %d sweeps", n)
	}
	cl.Heal(old)
	var info api.SweepInfo
	wait.Within(t, 15*time.Second, "the healed follower to forward a write", func() bool {
		info, err = old.StartSweep(context.Background(), api.SweepRequest{Mode: "quick"})
		return err == nil
	})
	wait.Within(t, 30*time.Second, "the forwarded sweep on the old leader's replica", func() bool {
		_, ok := old.Sweep(info.ID)
		return ok
	})
}
