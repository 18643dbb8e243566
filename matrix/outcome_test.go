package matrix

import (
	"fmt"
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

// One node whose RoCE netdev is at 9000 among nodes at 1500: every path
// negotiates 1024 and measures, so nothing fails and nobody is excluded;
// the warning names the odd node and tells it, not the others, to change.
func TestMTUMixIsAWarning(t *testing.T) {
	f := newFixture(4, 1)
	roce(f, func(int, int) int { return 3 })
	for i := range f.nodes {
		f.nodes[i].Ports[0].MTU = 1024
	}
	f.nodes[2].Ports[0].MTU = 4096
	m := f.build()
	if m.Outcome() != OutcomePass || len(m.Excluded(ExcludeOptions{})) != 0 || len(m.Warnings) != 1 {
		t.Fatalf("outcome %s, warnings %+v:\n%s", m.Outcome(), m.Warnings, m.Summary())
	}
	w := m.Warnings[0]
	if w.Kind != WarnMTUMix || w.Node != "node-03" || !strings.Contains(w.Fix, "on node-03") || !strings.Contains(w.Fix, "mtu 1500") ||
		!strings.Contains(m.Summary(), "warning: mtu-mix node-03/") {
		t.Fatalf("warning %+v:\n%s", w, m.Summary())
	}
}

// A soft-RDMA device bound to the management NIC: its GID is on another
// network than its peers', so its cells fail; the suspect says why and
// the fix rebinds the device instead of guessing at GID types.
func TestWrongNetworkNamesTheNetdev(t *testing.T) {
	f := newFixture(4, 1)
	for i := range f.nodes {
		p := &f.nodes[i].Ports[0]
		p.Device, p.LinkLayer, p.Netdev, p.IP = "rxe0", "Ethernet", "eth1", fmt.Sprintf("10.78.0.%d", 11+i)
	}
	f.nodes[3].Ports[0].Netdev, f.nodes[3].Ports[0].IP = "eth0", "10.77.0.14"
	for i := range f.cells {
		f.cells[i].SrcDevice, f.cells[i].DstDevice = "rxe0", "rxe0"
	}
	f.touching("node-04", 0, fail(probe.ClassRetryExceeded, "the peer is unreachable on this GID, or RoCE v1/v2 types differ", "check the GID index"))
	m := f.build()
	if len(m.Warnings) != 1 || m.Warnings[0].Kind != WarnWrongNetwork || m.Warnings[0].Node != "node-04" {
		t.Fatalf("warnings %+v", m.Warnings)
	}
	s := m.Suspects[0]
	if s.Node != "node-04" || !strings.Contains(s.Note, "10.77.0.0/24 (netdev eth0, 10.77.0.14)") || !strings.Contains(s.Note, "10.78.0.0/24") ||
		!strings.Contains(s.Fix, "rdma link add rxe0 type rxe netdev") {
		t.Fatalf("suspect %+v", s)
	}
}
