package matrix

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func TestSummaryHealthy(t *testing.T) {
	got := newFixture(8, 2).build().Summary()
	want := "rdmamesh matrix: 8 nodes, 2 rails, 112 cells\n" +
		"cells: 112 ok, 0 failed, 0 slow-latency, 0 low-bandwidth, 0 untested\n" +
		"HEALTHY\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestSummaryHCADown(t *testing.T) {
	f := newFixture(16, 2)
	f.touching("node-03", 1, fail(probe.ClassPortDown, "port 1 of mlx5_1 is DOWN", "reseat the cable"))
	lines := strings.Split(strings.TrimSpace(f.build().Summary()), "\n")
	if len(lines) != 5 {
		t.Fatalf("lines:\n%s", strings.Join(lines, "\n"))
	}
	if lines[1] != "cells: 450 ok, 30 failed, 0 slow-latency, 0 low-bandwidth, 0 untested" ||
		lines[2] != "UNHEALTHY: 1 suspect(s)" {
		t.Fatalf("header:\n%s", strings.Join(lines[:3], "\n"))
	}
	prefix := "suspect 1: hca node-03/mlx5_1 (rail 1): port-down in 30/30 cells (confidence 0.94) — node-03/mlx5_1 is bad on rail 1"
	if !strings.HasPrefix(lines[3], prefix) || !strings.HasSuffix(lines[3], "; fix: reseat the cable") {
		t.Fatalf("suspect line:\n%s\nwant prefix\n%s", lines[3], prefix)
	}
	if lines[4] != "exclude (1 node(s)): node-03" {
		t.Fatalf("exclude line %q", lines[4])
	}
}

// Past ten suspects the summary says how many more there are.
func TestSummaryCapsSuspects(t *testing.T) {
	f := newFixture(12, 1)
	for i := 0; i < 12; i += 2 {
		fail(probe.ClassTimeout, "timed out", "")(f.cell(nodeName(i), nodeName(i+1), 0))
	}
	for i := 1; i < 11; i += 2 {
		fail(probe.ClassTimeout, "timed out", "")(f.cell(nodeName(i), nodeName(i+1), 0))
	}
	m := f.build()
	if len(m.Suspects) != 11 {
		t.Fatalf("%d suspects:\n%s", len(m.Suspects), m.Summary())
	}
	s := m.Summary()
	if strings.Count(s, "\nsuspect ") != 10 || !strings.Contains(s, "... and 1 more suspect(s)") {
		t.Fatalf("summary:\n%s", s)
	}
	for i := 1; i <= 10; i++ {
		if !strings.Contains(s, fmt.Sprintf("suspect %d: pair ", i)) {
			t.Fatalf("no suspect %d:\n%s", i, s)
		}
	}
}

func TestRollupsCountBothEnds(t *testing.T) {
	f := newFixture(4, 1)
	fail(probe.ClassTimeout, "timed out", "")(f.cell("node-01", "node-02", 0))
	f.cell("node-03", "node-04", 0).Latency = &probe.Latency{P50Ns: 9000}
	f.drop(func(c *Cell) bool { return c.Src == "node-04" && c.Dst == "node-01" })
	m := f.build()
	want := map[string][4]int{ // failed, slow, untested, cells
		"node-01": {1, 0, 1, 6}, "node-02": {1, 0, 0, 6}, "node-03": {0, 1, 0, 6}, "node-04": {0, 1, 1, 6},
	}
	for _, r := range m.NodeRollups {
		w := want[r.Key]
		if r.Failed != w[0] || r.Slow != w[1] || r.Untested != w[2] || r.Cells != w[3] ||
			r.OK != r.Cells-r.Failed-r.Slow-r.Untested {
			t.Errorf("rollup %+v, want %v", r, w)
		}
	}
	rr := m.RailRollups[0]
	if rr.Key != "rail-0" || rr.Cells != 12 || rr.Failed != 1 || rr.Slow != 1 || rr.Untested != 1 || rr.OK != 9 {
		t.Fatalf("rail rollup %+v", rr)
	}
	// node-03's p50s: five cells near 1 µs and one at 9 µs; the median
	// ignores the outlier.
	if p := m.NodeRollups[2].P50Ns; p < 1000 || p > 1060 {
		t.Fatalf("node-03 median p50 %v", p)
	}
}
