package cluster

import (
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

func intp(v int) *int { return &v }

// TestSweepPlans runs each kind of sweep spec through the whole stack and
// checks the plan (nodes, rounds, cells) and that a healthy fabric passes
// even when the plan leaves pairs or rails out on purpose.
func TestSweepPlans(t *testing.T) {
	cl := start(t, 6)
	tests := []struct {
		name                 string
		req                  api.SweepRequest
		nodes, rounds, cells int
		cross                int
	}{
		{name: "hostlist, k-batch, cross rails",
			req:   api.SweepRequest{Hosts: "node-0[1-4]", Pattern: "k-batch", BatchSize: 1, RailMode: "cross"},
			nodes: 4, rounds: 6, cells: 24, cross: 24},
		{name: "one-to-all", req: api.SweepRequest{Pattern: "one-to-all", Root: "node-03"},
			nodes: 6, rounds: 5, cells: 20},
		{name: "label selector and a rail subset", req: api.SweepRequest{Labels: map[string]string{"group": "leaf-01"}, Rails: []int{1}},
			nodes: 6, rounds: 5, cells: 30},
		{name: "all rail combinations of two nodes", req: api.SweepRequest{Nodes: []string{"node-01", "node-02"}, RailMode: "all"},
			nodes: 2, rounds: 1, cells: 8, cross: 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Retests = intp(0)
			info, m := sweepWith(t, cl, tc.req)
			if info.State != api.SweepDone || len(info.Nodes) != tc.nodes || info.Rounds != tc.rounds || info.Cells != tc.cells || info.CellsDone != tc.cells {
				t.Fatalf("sweep %s: %d nodes, %d rounds, %d/%d cells; want %d nodes, %d rounds, %d cells (%s)",
					info.State, len(info.Nodes), info.Rounds, info.CellsDone, info.Cells, tc.nodes, tc.rounds, tc.cells, info.Error)
			}
			measured := len(m.Cells) - m.Counts[matrix.VerdictUntested] + len(m.Cross)
			if len(m.Cross) != tc.cross || measured != tc.cells || !m.Healthy {
				t.Fatalf("%d cross cells, %d measured, healthy %v; want %d cross, %d measured, healthy\n%s",
					len(m.Cross), measured, m.Healthy, tc.cross, tc.cells, m.Summary())
			}
			if info.Spec == nil || info.Spec.Pattern == "" || info.Spec.RailMode == "" {
				t.Fatalf("the sweep does not say what it ran: %+v", info.Spec)
			}
		})
	}
}

func TestSweepBudget(t *testing.T) {
	cl := start(t, 4)
	info, _ := sweepWith(t, cl, api.SweepRequest{Budget: "1ns"})
	if info.State != api.SweepFailed || !strings.Contains(info.Error, "time budget 1ns exceeded after 0 of 3 rounds") {
		t.Fatalf("sweep %s %q; want failed on its time budget", info.State, info.Error)
	}
}

// TestRetestsConfirm checks ClusterKit-style confirmation end to end: a
// node that is slow every time stays slow, with the evidence in the reason;
// a lossy link shows how often it failed; a healthy fabric retests nothing.
func TestRetestsConfirm(t *testing.T) {
	t.Run("healthy", func(t *testing.T) {
		cl := start(t, 4)
		info, m := sweepWith(t, cl, api.SweepRequest{Retests: intp(2)})
		if !m.Healthy || info.Retested != 0 || info.Rounds != 3 {
			t.Fatalf("healthy fabric: retested %d pairs over %d rounds\n%s", info.Retested, info.Rounds, m.Summary())
		}
	})
	t.Run("slow node", func(t *testing.T) {
		cl := start(t, 6, "node-04:lat=5x")
		info, m := sweepWith(t, cl, api.SweepRequest{Retests: intp(2)})
		if info.Retested == 0 || info.RetestPass != 2 || info.Rounds <= 5 {
			t.Fatalf("retested %d pairs in %d passes over %d rounds; want both passes to run", info.Retested, info.RetestPass, info.Rounds)
		}
		if len(m.Suspects) == 0 || m.Suspects[0].Node != "node-04" {
			t.Fatalf("want node-04 first:\n%s", m.Summary())
		}
		confirmed := 0
		for _, c := range m.Cells {
			if len(c.Retests) == 2 && c.Verdict == matrix.VerdictSlowLatency && strings.Contains(c.Reason, "best of 3 attempts") {
				confirmed++
			}
		}
		if confirmed == 0 {
			t.Fatalf("no cell of node-04 confirmed slow by both passes:\n%s", m.Summary())
		}
	})
	t.Run("lossy link", func(t *testing.T) {
		cl := start(t, 4, "node-02/mlx5_0:loss=50%")
		info, m := sweepWith(t, cl, api.SweepRequest{Retests: intp(3), Mode: "quick"})
		if info.Retested == 0 {
			t.Fatalf("nothing retested:\n%s", m.Summary())
		}
		retested := 0
		for _, c := range m.Cells {
			if len(c.Retests) > 0 && c.Verdict == matrix.VerdictFailed && strings.Contains(c.Reason, "attempts") {
				retested++
			}
			if c.Verdict != matrix.VerdictOK && c.Rail != 0 {
				t.Errorf("%s→%s rail %d is %s: only rail 0 of node-02 is lossy", c.Src, c.Dst, c.Rail, c.Verdict)
			}
		}
		if retested == 0 || m.Healthy {
			t.Fatalf("no failed cell carries its retest evidence:\n%s", m.Summary())
		}
	})
}
