package matrix

import (
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func lat(p50 float64) *probe.Latency {
	return &probe.Latency{Samples: 1000, MinNs: p50 - 50, P50Ns: p50, P99Ns: p50 + 400, MaxNs: p50 + 2000}
}

func okAttempt(p50 float64) Attempt {
	return Attempt{Round: 40, Class: probe.ClassOK, Latency: lat(p50)}
}

func failAttempt(c probe.Class) Attempt {
	return Attempt{Round: 40, Class: c, Error: &probe.Error{Class: c, Cause: "retest cause " + string(c), Fix: "fix it"}}
}

// retestCase is node-02 -> node-05 of a 6 x 1 fabric measured first by
// first, then retested.
type retestCase struct {
	name        string
	first       func(c *Cell)
	retests     []Attempt
	wantVerdict Verdict
	wantClass   probe.Class
	wantReason  string // substring; "" = reason must be empty
}

func (tc *retestCase) fixture() *fixture {
	f := newFixture(6, 1)
	c := f.cell("node-02", "node-05", 0)
	tc.first(c)
	c.Retests = tc.retests
	return f
}

func retestCases() []retestCase {
	return []retestCase{
		{name: "slow once, then fine: cleared",
			first: slow(5), retests: []Attempt{okAttempt(1010)}, wantVerdict: VerdictOK, wantClass: probe.ClassOK},
		{name: "slow every time: confirmed",
			first: slow(5), retests: []Attempt{okAttempt(5200), okAttempt(5100)},
			wantVerdict: VerdictSlowLatency, wantClass: probe.ClassOK, wantReason: "best of 3 attempts"},
		{name: "retry exceeded once, then fine: intermittent stays failed",
			first:   fail(probe.ClassRetryExceeded, "packets lost", "check the cable"),
			retests: []Attempt{okAttempt(1000), okAttempt(1000)}, wantVerdict: VerdictFailed,
			wantClass: probe.ClassRetryExceeded, wantReason: "intermittent: failed 1 of 3 attempts"},
		{name: "fine first, a retest fails: the failure is the verdict",
			first:   func(c *Cell) {},
			retests: []Attempt{failAttempt(probe.ClassRetryExceeded)}, wantVerdict: VerdictFailed,
			wantClass: probe.ClassRetryExceeded, wantReason: "retest cause retry-exceeded (intermittent: failed 1 of 2 attempts)"},
		{name: "timeout once, retests measure: superseded",
			first:   fail(probe.ClassTimeout, "pair deadline", "look at the worker"),
			retests: []Attempt{okAttempt(1020)}, wantVerdict: VerdictOK, wantClass: probe.ClassOK},
		{name: "failed every time",
			first:   fail(probe.ClassRetryExceeded, "packets lost", "check the cable"),
			retests: []Attempt{failAttempt(probe.ClassRetryExceeded)}, wantVerdict: VerdictFailed,
			wantClass: probe.ClassRetryExceeded, wantReason: "packets lost (failed all 2 attempts)"},
	}
}

func TestRetestVerdicts(t *testing.T) {
	for _, tc := range retestCases() {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.fixture().build()
			got := m.Cells[cellIndexOf(m, "node-02", "node-05", 0)]
			if got.Verdict != tc.wantVerdict || got.Class != tc.wantClass {
				t.Fatalf("verdict %s class %s (%q); want %s %s", got.Verdict, got.Class, got.Reason, tc.wantVerdict, tc.wantClass)
			}
			if tc.wantReason == "" && got.Reason != "" || !strings.Contains(got.Reason, tc.wantReason) {
				t.Fatalf("reason %q; want it to contain %q", got.Reason, tc.wantReason)
			}
			if len(got.Retests) != len(tc.retests) {
				t.Fatalf("the history of %d retests became %d", len(tc.retests), len(got.Retests))
			}
		})
	}
}

func TestRetestDoesNotTouchInput(t *testing.T) {
	f := newFixture(4, 1)
	c := f.cell("node-01", "node-02", 0)
	fail(probe.ClassTimeout, "deadline", "")(c)
	c.Retests = []Attempt{okAttempt(900)}
	f.build()
	if c.Class != probe.ClassTimeout || c.Latency != nil {
		t.Fatalf("Build changed its input cell: %+v", *c)
	}
}

func TestRetestWorthy(t *testing.T) {
	tests := []struct {
		v    Verdict
		c    probe.Class
		want bool
	}{
		{VerdictSlowLatency, probe.ClassOK, true},
		{VerdictLowBandwidth, probe.ClassOK, true},
		{VerdictFailed, probe.ClassRetryExceeded, true},
		{VerdictFailed, probe.ClassTimeout, true},
		{VerdictFailed, probe.ClassPortDown, false},
		{VerdictFailed, probe.ClassPeerLost, false},
		{VerdictFailed, probe.ClassInvalidGID, false},
		{VerdictFailed, probe.ClassMTUMismatch, false},
		{VerdictOK, probe.ClassOK, false},
		{VerdictUntested, "", false},
	}
	for _, tc := range tests {
		r := &Result{Cell: Cell{Class: tc.c}, Verdict: tc.v}
		if got := RetestWorthy(r); got != tc.want {
			t.Errorf("RetestWorthy(%s, %s) = %v; want %v", tc.v, tc.c, got, tc.want)
		}
	}
}

func cellIndexOf(m *Matrix, src, dst string, rail int) int {
	for i := range m.Cells {
		if c := &m.Cells[i]; c.Src == src && c.Dst == dst && c.Rail == rail {
			return i
		}
	}
	panic("no cell")
}

// crossRailFabric is a 6 x 2 fabric with every cross path of its two
// rails measured: a healthy population, and a spine hop (rail 1 → rail 0)
// that is slow for everyone.
func crossRailFabric() *fixture {
	f := newFixture(6, 2)
	for s := 0; s < 6; s++ {
		for d := 0; d < 6; d++ {
			if s == d {
				continue
			}
			for _, rr := range [][2]int{{0, 1}, {1, 0}} {
				dr := rr[1]
				c := Cell{Src: nodeName(s), Dst: nodeName(d), Rail: rr[0], DstRail: &dr, Class: probe.ClassOK,
					Latency: lat(1800 + float64((s+d)%5)*10)}
				if rr[0] == 1 {
					c.Latency = lat(9000)
				}
				f.cells = append(f.cells, c)
			}
		}
	}
	return f
}

func TestCrossRail(t *testing.T) {
	m := crossRailFabric().build()
	if len(m.Cells) != 2*30 || len(m.Cross) != 60 {
		t.Fatalf("%d same-rail and %d cross cells; want 60 and 60", len(m.Cells), len(m.Cross))
	}
	if m.Counts[VerdictOK] != 60 {
		t.Fatalf("cross cells leaked into the rail matrix: counts %v", m.Counts)
	}
	if m.CrossCounts[VerdictSlowLatency] != 30 || m.Healthy {
		t.Fatalf("cross counts %v healthy %v; want the 30 rail-1→0 cells slow and an unhealthy sweep", m.CrossCounts, m.Healthy)
	}
	var top *Suspect
	for i := range m.Suspects {
		if strings.Contains(m.Suspects[i].Reason, "cross-rail path rail 1 → rail 0") {
			top = &m.Suspects[i]
		}
	}
	if top == nil || top.Kind != "rail" || top.Bad != 30 {
		t.Fatalf("no rail 1 → 0 spine suspect in %+v", m.Suspects)
	}
	if r := m.Cross[0]; r.Rail != 0 || *r.DstRail != 1 || r.Src != "node-01" || r.Dst != "node-02" {
		t.Fatalf("cross cells not sorted by rail, dst rail, src, dst: first %+v", r.Cell)
	}
}

func TestTailRule(t *testing.T) {
	tailOf := func(factor float64) func(c *Cell) {
		return func(c *Cell) {
			l := *c.Latency
			l.P99Ns *= factor
			c.Latency = &l
		}
	}
	tests := []struct {
		name   string
		factor float64
		rule   float64 // Thresholds.TailFactor; -1 = defaults
		want   Verdict
	}{
		{"10x tail, default rule", 10, -1, VerdictSlowLatency},
		{"4x tail, default rule", 4, -1, VerdictOK},
		{"10x tail, rule off", 10, 0, VerdictOK},
		{"3x tail, rule at 2x", 3, 2, VerdictSlowLatency},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(8, 1)
			f.touching("node-03", 0, tailOf(tc.factor))
			th := DefaultThresholds()
			if tc.rule >= 0 {
				th.TailFactor = tc.rule
			}
			m := Build(f.nodes, f.cells, th)
			c := m.Cells[cellIndexOf(m, "node-03", "node-05", 0)]
			if c.Verdict != tc.want {
				t.Fatalf("verdict %s (%q); want %s", c.Verdict, c.Reason, tc.want)
			}
			if tc.want == VerdictSlowLatency && !strings.Contains(c.Reason, "median p99") {
				t.Fatalf("reason %q does not name the tail rule", c.Reason)
			}
			if tc.want == VerdictSlowLatency && (len(m.Suspects) == 0 || m.Suspects[0].Node != "node-03") {
				t.Fatalf("node-03 not blamed first:\n%s", m.Summary())
			}
		})
	}
}
