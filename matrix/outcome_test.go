package matrix

import (
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func TestOutcome(t *testing.T) {
	cases := []struct {
		name  string
		build func() *Matrix
		want  Outcome
		line  string
	}{
		{"a clean fabric passes", func() *Matrix { return newFixture(4, 2).build() }, OutcomePass, "HEALTHY"},
		{"a failed cell is a fault, however weak its suspect", func() *Matrix {
			f := newFixture(8, 1)
			fail(probe.ClassRetryExceeded, "lost", "")(f.cell("node-01", "node-02", 0))
			return f.build()
		}, OutcomeFault, "UNHEALTHY: 1 suspect(s)"},
		{"a confident slow HCA is a performance problem", func() *Matrix {
			f := newFixture(8, 1)
			f.touching("node-03", 0, slow(4))
			return f.build()
		}, OutcomePerformance, "UNHEALTHY (performance): 1 suspect(s), no cell failed"},
		{"a slow pair on a quiet rail is a slow path", func() *Matrix {
			f := newFixture(8, 1)
			slow(4)(f.cell("node-01", "node-02", 0))
			return f.build()
		}, OutcomePerformance, "UNHEALTHY (performance): 1 suspect(s)"},
		{"one narrow cell on a noisy rail is too weak to act on", func() *Matrix {
			f := noisyFabric(16, 1, 0.3, 1)
			c := f.cell("node-01", "node-02", 0)
			c.Bandwidth = &probe.Bandwidth{Gbps: c.Bandwidth.Gbps / 20, MsgRate: 10, Bytes: 1 << 20, Duration: 1}
			return f.build()
		}, OutcomePass, "cell(s) slower or narrower than their rail, too weakly to act on"},
		{"untested cells and nothing bad: untested", func() *Matrix {
			f := newFixture(4, 1)
			f.drop(func(c *Cell) bool { return c.Src == "node-01" && c.Dst == "node-02" })
			return f.build()
		}, OutcomeUntested, "UNTESTED: 1 cell(s) not measured; nothing measured was bad"},
		{"a one-to-all plan's unplanned cells are not untested", func() *Matrix {
			f := newFixture(4, 1)
			f.drop(func(c *Cell) bool { return c.Src != "node-01" })
			th := DefaultThresholds()
			th.TestedOnly = true
			return Build(f.nodes, f.cells, th)
		}, OutcomePass, "HEALTHY"},
		{"nothing to test is untested", func() *Matrix { return newFixture(1, 1).build() }, OutcomeUntested, "UNTESTED: no cells to test"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := c.build()
			if got := m.Outcome(); got != c.want || !strings.Contains(m.Summary(), c.line) {
				t.Fatalf("outcome %s, want %s; summary:\n%s(want a line with %q)", got, c.want, m.Summary(), c.line)
			}
		})
	}
}

// A noisy rail says so in the summary and in the JSON.
func TestNoiseIsReported(t *testing.T) {
	m := noisyFabric(8, 1, 0.3, 1).build()
	if len(m.Noise) != 2 || m.Noise[0].Judged != "noisy" || m.Noise[1].Figure != "gbps" {
		t.Fatalf("noise %+v, want p50 and gbps judged as noisy", m.Noise)
	}
	if !strings.Contains(m.Summary(), "noise: rail 0's Gb/s vary") {
		t.Fatalf("summary:\n%s", m.Summary())
	}
	m = noisyFabric(8, 1, 0.9, 1).build()
	if len(m.Noise) == 0 || m.Noise[0].Judged != "not-judged" || !strings.Contains(m.Summary(), "no cell is judged slow or short on its own") {
		t.Fatalf("noise %+v; summary:\n%s", m.Noise, m.Summary())
	}
}

// A worker the control network cannot reach is untested, not broken: its
// cells feed no fabric suspect and no exclude list, the node is named with
// the cause, and the sweep's outcome is untested (the gate's exit 3).
func TestUnreachableWorkerIsUntested(t *testing.T) {
	f := newFixture(4, 1)
	unreachable := fail(probe.ClassUnreachable, "cannot reach worker node-03 at 10.0.0.3:7947 from the coordinator while gossip sees it alive", "")
	f.touching("node-03", 0, func(c *Cell) {
		// Two of its six cells were measured before the port was filtered.
		if c.Dst == "node-03" && c.Src != "node-02" {
			return
		}
		unreachable(c)
	})
	m := f.build()
	if m.Outcome() != OutcomeUntested || len(m.Excluded(ExcludeOptions{})) != 0 || m.Counts[VerdictFailed] != 0 {
		t.Fatalf("outcome %s, excluded %v, counts %v:\n%s", m.Outcome(), m.Excluded(ExcludeOptions{}), m.Counts, m.Summary())
	}
	s := m.Suspects
	if len(s) != 1 || s[0].Node != "node-03" || s[0].Verdict != VerdictUntested || s[0].Bad != 4 || s[0].Total != 6 ||
		!strings.Contains(s[0].Reason, "could not be reached over the control network") || !strings.Contains(s[0].Fix, "control network") {
		t.Fatalf("suspects %+v", s)
	}
}
