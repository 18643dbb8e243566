package matrix

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// labelLeaves puts every `size` consecutive nodes behind one leaf switch:
// leaf=L1 for node-01..node-04, and so on.
func (f *fixture) labelLeaves(size int) {
	for i := range f.nodes {
		f.nodes[i].Labels = map[string]string{"leaf": fmt.Sprintf("L%d", i/size+1)}
	}
}

// onRail applies fn to every cell of a rail.
func (f *fixture) onRail(rail int, fn func(c *Cell)) {
	for i := range f.cells {
		if f.cells[i].Rail == rail {
			fn(&f.cells[i])
		}
	}
}

func scaleBW(x float64) func(c *Cell) {
	return func(c *Cell) {
		if c.Bandwidth != nil {
			b := *c.Bandwidth
			b.Gbps *= x
			b.MsgRate *= x // same message size, fewer of them
			c.Bandwidth = &b
		}
	}
}

func tail(x float64) func(c *Cell) {
	return func(c *Cell) {
		if c.Latency != nil {
			l := *c.Latency
			l.P99Ns *= x
			l.MaxNs *= x
			c.Latency = &l
		}
	}
}

// topWant is the first suspect a scenario must produce.
type topWant struct {
	kind, node, group string
	rail              int
	verdict           Verdict
	class             probe.Class
	minConf           float64
}

// scenarioCase is one row of the fault table: a fault on a fabric of 16
// nodes behind four leaves of four, 4 rails, the suspect an operator must
// see first and how many suspects there may be.
type scenarioCase struct {
	name     string
	th       func(*Thresholds)
	break_   func(f *fixture)
	top      topWant
	suspects int
	second   string // title of the second suspect, when there is one
}

// scenarioFabric is the fault table's healthy fabric.
func scenarioFabric() *fixture {
	f := newFixture(16, 4)
	f.labelLeaves(4)
	return f
}

// scenarioCases is the fault table, one fault class each, deterministic;
// TestScenarios checks its first suspects and the golden files record
// everything else it produces.
func scenarioCases() []scenarioCase {
	portDown := fail(probe.ClassPortDown, "port 1 is DOWN", "")
	return []scenarioCase{
		{
			name:   "hca down",
			break_: func(f *fixture) { f.touching("node-05", 2, portDown) },
			top: topWant{kind: KindHCA, node: "node-05", rail: 2, verdict: VerdictFailed,
				class: probe.ClassPortDown, minConf: 0.9},
			suspects: 1,
		},
		{
			name: "node dead",
			break_: func(f *fixture) {
				f.touching("node-09", AllRails, fail(probe.ClassPeerLost, "worker did not answer", ""))
				f.nodes[8].State = "dead"
			},
			top: topWant{kind: KindNode, node: "node-09", rail: AllRails, verdict: VerdictFailed,
				class: probe.ClassPeerLost, minConf: 0.95},
			suspects: 1,
		},
		{
			name: "flaky link, one pair",
			break_: func(f *fixture) {
				fail(probe.ClassRetryExceeded, "retry exceeded", "")(f.cell("node-02", "node-11", 1))
				fail(probe.ClassRetryExceeded, "retry exceeded", "")(f.cell("node-11", "node-02", 1))
			},
			top: topWant{kind: KindPair, node: "node-02", rail: 1, verdict: VerdictFailed,
				class: probe.ClassRetryExceeded, minConf: 0.45},
			suspects: 1,
		},
		{
			name:   "degraded bandwidth",
			break_: func(f *fixture) { f.touching("node-07", 0, scaleBW(0.4)) },
			top: topWant{kind: KindHCA, node: "node-07", rail: 0, verdict: VerdictLowBandwidth,
				minConf: 0.9},
			suspects: 1,
		},
		{
			name:   "high tail latency on one node",
			th:     func(th *Thresholds) { th.RobustZ = 6 },
			break_: func(f *fixture) { f.touching("node-13", AllRails, tail(20)) },
			top: topWant{kind: KindNode, node: "node-13", rail: AllRails, verdict: VerdictSlowLatency,
				minConf: 0.9},
			suspects: 1,
		},
		{
			name:   "high tail latency, absolute limit",
			th:     func(th *Thresholds) { th.MaxP99Ns = 10000 },
			break_: func(f *fixture) { f.touching("node-13", AllRails, tail(20)) },
			top: topWant{kind: KindNode, node: "node-13", rail: AllRails, verdict: VerdictSlowLatency,
				minConf: 0.9},
			suspects: 1,
		},
		{
			name:   "rail-wide problem",
			break_: func(f *fixture) { f.onRail(3, fail(probe.ClassRetryExceeded, "retry exceeded", "")) },
			top: topWant{kind: KindRail, rail: 3, verdict: VerdictFailed, class: probe.ClassRetryExceeded,
				minConf: 0.9},
			suspects: 1,
		},
		{
			name: "switch group down on one rail",
			break_: func(f *fixture) {
				for _, n := range []string{"node-05", "node-06", "node-07", "node-08"} {
					f.touching(n, 1, portDown)
				}
			},
			top: topWant{kind: KindSwitchGroup, group: "leaf=L2", rail: 1, verdict: VerdictFailed,
				class: probe.ClassPortDown, minConf: 0.8},
			suspects: 1,
		},
		{
			name: "switch group down on every rail (rack power)",
			break_: func(f *fixture) {
				for _, n := range []string{"node-09", "node-10", "node-11", "node-12"} {
					f.touching(n, AllRails, fail(probe.ClassPeerLost, "no answer", ""))
				}
			},
			top: topWant{kind: KindSwitchGroup, group: "leaf=L3", rail: AllRails, verdict: VerdictFailed,
				class: probe.ClassPeerLost, minConf: 0.9},
			suspects: 1,
		},
		{
			name: "leaf uplinks down: the group talks inside, not out",
			break_: func(f *fixture) {
				inL4 := func(n string) bool { return n >= "node-13" }
				f.onRail(0, func(c *Cell) {
					if inL4(c.Src) != inL4(c.Dst) {
						fail(probe.ClassRetryExceeded, "retry exceeded", "")(c)
					}
				})
			},
			top: topWant{kind: KindSwitchGroup, group: "leaf=L4", rail: 0, verdict: VerdictFailed,
				class: probe.ClassRetryExceeded, minConf: 0.8},
			suspects: 1,
		},
		{
			name: "two overlapping faults: a slow node and a dead HCA",
			break_: func(f *fixture) {
				f.touching("node-03", 0, portDown)
				f.touching("node-10", AllRails, slow(5))
			},
			// The dead HCA first: its writes fail, the node's only slow.
			top: topWant{kind: KindHCA, node: "node-03", rail: 0, verdict: VerdictFailed, class: probe.ClassPortDown,
				minConf: 0.9},
			suspects: 2,
			second:   "node node-10",
		},
		{
			name: "two overlapping faults: a leaf and an HCA on the same rail",
			break_: func(f *fixture) {
				for _, n := range []string{"node-05", "node-06", "node-07", "node-08"} {
					f.touching(n, 1, portDown)
				}
				f.touching("node-14", 1, fail(probe.ClassInvalidGID, "GID index 3 is RoCE v1", ""))
			},
			top: topWant{kind: KindSwitchGroup, group: "leaf=L2", rail: 1, verdict: VerdictFailed,
				class: probe.ClassPortDown, minConf: 0.8},
			suspects: 2,
			second:   "hca node-14/mlx5_1 (rail 1)",
		},
	}
}

// thresholds are the defaults with the case's changes.
func (c *scenarioCase) thresholds() Thresholds {
	th := DefaultThresholds()
	if c.th != nil {
		c.th(&th)
	}
	return th
}

func TestScenarios(t *testing.T) {
	for _, c := range scenarioCases() {
		t.Run(c.name, func(t *testing.T) {
			f := scenarioFabric()
			c.break_(f)
			m := Build(f.nodes, f.cells, c.thresholds())
			if m.Healthy || len(m.Suspects) != c.suspects {
				t.Fatalf("healthy=%v, %d suspects, want %d:\n%s", m.Healthy, len(m.Suspects), c.suspects, m.Summary())
			}
			s, w := m.Suspects[0], c.top
			if s.Kind != w.kind || s.Node != w.node || s.Group != w.group || s.Rail != w.rail ||
				s.Verdict != w.verdict || s.Class != w.class || s.Confidence < w.minConf {
				t.Fatalf("top suspect\n got %+v\nwant %+v\n%s", s, w, m.Summary())
			}
			if c.second != "" && m.Suspects[1].title() != c.second {
				t.Fatalf("second suspect %q, want %q\n%s", m.Suspects[1].title(), c.second, m.Summary())
			}
			checkSuspectInvariants(t, m)
		})
	}
}

// checkSuspectInvariants holds for every suspect of every matrix.
func checkSuspectInvariants(t *testing.T, m *Matrix) {
	t.Helper()
	for i, s := range m.Suspects {
		if s.Confidence < 0 || s.Confidence > 1 {
			t.Errorf("suspect %d: confidence %v outside 0..1", i, s.Confidence)
		}
		if s.Confidence < LowConfidence && s.Note == "" {
			t.Errorf("suspect %d (%s): low confidence %v without a note", i, s.title(), s.Confidence)
		}
		if s.Reason == "" || s.Evidence == "" || s.Fix == "" || s.Bad < 1 || s.Bad > s.Total {
			t.Errorf("suspect %d lacks reason/evidence/fix or has bad %d of %d: %+v", i, s.Bad, s.Total, s)
		}
		if s.BgBad < 0 || s.BgBad > s.BgTotal {
			t.Errorf("suspect %d: background %d/%d", i, s.BgBad, s.BgTotal)
		}
		if (s.Kind == KindSwitchGroup) != (s.Group != "" && len(s.Members) > 1) {
			t.Errorf("suspect %d: kind %s with group %q members %v", i, s.Kind, s.Group, s.Members)
		}
		if strings.Contains(s.Reason, "%!") || strings.Contains(s.Fix, "%!") || strings.Contains(s.Note, "%!") {
			t.Errorf("suspect %d: format error in %+v", i, s)
		}
	}
}
