package matrix

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// want describes one expected suspect; empty fields are not checked.
type want struct {
	kind, node, device, peer string
	rail                     int
	class                    probe.Class
	verdict                  Verdict
	bad, total               int
	fix                      string // substring
}

func (w want) check(t *testing.T, i int, s Suspect) {
	t.Helper()
	bad := w.kind != s.Kind || w.node != s.Node || w.device != s.Device || w.peer != s.Peer ||
		w.rail != s.Rail || w.class != s.Class || w.verdict != s.Verdict ||
		w.bad != s.Bad || w.total != s.Total || !strings.Contains(s.Fix, w.fix)
	if bad {
		t.Errorf("suspect %d:\n got %+v\nwant %+v", i, s, w)
	}
}

// localizeCase is a fault on a small unlabelled fabric and every suspect
// it must produce, in order.
type localizeCase struct {
	name    string
	nodes   int
	rails   int
	break_  func(f *fixture)
	healthy bool
	want    []want
}

func localizeCases() []localizeCase {
	return []localizeCase{
		{
			name: "all ok", nodes: 8, rails: 2, break_: func(*fixture) {}, healthy: true,
		},
		{
			// The peers' cells to node-04 fail too; node-04 explains them.
			name: "one hca down", nodes: 8, rails: 2,
			break_: func(f *fixture) {
				f.touching("node-04", 1, fail(probe.ClassPortDown, "port 1 of mlx5_1 is DOWN", "reseat the cable of node-04/mlx5_1"))
			},
			want: []want{{kind: KindHCA, node: "node-04", device: "mlx5_1", rail: 1, class: probe.ClassPortDown,
				verdict: VerdictFailed, bad: 14, total: 14, fix: "reseat the cable"}},
		},
		{
			name: "one hca down, 16 nodes", nodes: 16, rails: 2,
			break_: func(f *fixture) {
				f.touching("node-03", 1, fail(probe.ClassPortDown, "port down", ""))
			},
			want: []want{{kind: KindHCA, node: "node-03", device: "mlx5_1", rail: 1, class: probe.ClassPortDown,
				verdict: VerdictFailed, bad: 30, total: 30, fix: "bring the port up"}},
		},
		{
			name: "dead node", nodes: 8, rails: 2,
			break_: func(f *fixture) {
				f.touching("node-06", AllRails, fail(probe.ClassPeerLost, "worker did not answer", "check the remote worker"))
			},
			want: []want{{kind: KindNode, node: "node-06", rail: AllRails, class: probe.ClassPeerLost,
				verdict: VerdictFailed, bad: 28, total: 28, fix: "the worker on node-06 is unreachable"}},
		},
		{
			// One rail is not enough to tell node from HCA, but peer-lost is.
			name: "dead node, single rail", nodes: 5, rails: 1,
			break_: func(f *fixture) {
				f.touching("node-02", AllRails, fail(probe.ClassPeerLost, "worker did not answer", ""))
			},
			want: []want{{kind: KindNode, node: "node-02", rail: AllRails, class: probe.ClassPeerLost,
				verdict: VerdictFailed, bad: 8, total: 8, fix: "worker on node-02"}},
		},
		{
			name: "slow node", nodes: 8, rails: 2,
			break_: func(f *fixture) { f.touching("node-03", AllRails, slow(5)) },
			want: []want{{kind: KindNode, node: "node-03", rail: AllRails, verdict: VerdictSlowLatency,
				bad: 28, total: 28, fix: "check PCIe width/NUMA placement, CPU load and the HCA's firmware"}},
		},
		{
			name: "slow hca", nodes: 8, rails: 2,
			break_: func(f *fixture) { f.touching("node-03", 0, slow(5)) },
			want: []want{{kind: KindHCA, node: "node-03", device: "mlx5_0", rail: 0, verdict: VerdictSlowLatency,
				bad: 14, total: 14, fix: "PCIe"}},
		},
		{
			name: "rail down", nodes: 8, rails: 2,
			break_: func(f *fixture) {
				for i := range f.cells {
					if f.cells[i].Rail == 1 {
						fail(probe.ClassRetryExceeded, "transport retry counter exceeded", "")(&f.cells[i])
					}
				}
			},
			want: []want{{kind: KindRail, rail: 1, class: probe.ClassRetryExceeded, verdict: VerdictFailed,
				bad: 56, total: 56, fix: "switch"}},
		},
		{
			name: "single bad pair, one direction", nodes: 8, rails: 2,
			break_: func(f *fixture) {
				fail(probe.ClassRetryExceeded, "retry exceeded", "")(f.cell("node-02", "node-07", 0))
			},
			want: []want{{kind: KindPair, node: "node-02", peer: "node-07", rail: 0, class: probe.ClassRetryExceeded,
				verdict: VerdictFailed, bad: 1, total: 2, fix: "packets are lost"}},
		},
		{
			name: "single bad pair, reverse direction", nodes: 8, rails: 2,
			break_: func(f *fixture) {
				fail(probe.ClassMTUMismatch, "4096 vs 1024", "")(f.cell("node-07", "node-02", 1))
			},
			want: []want{{kind: KindPair, node: "node-07", peer: "node-02", rail: 1, class: probe.ClassMTUMismatch,
				verdict: VerdictFailed, bad: 1, total: 2, fix: "same MTU"}},
		},
		{
			name: "single bad pair, both directions", nodes: 8, rails: 2,
			break_: func(f *fixture) {
				fail(probe.ClassTimeout, "timed out", "")(f.cell("node-05", "node-03", 1))
				fail(probe.ClassTimeout, "timed out", "")(f.cell("node-03", "node-05", 1))
			},
			want: []want{{kind: KindPair, node: "node-03", peer: "node-05", rail: 1, class: probe.ClassTimeout,
				verdict: VerdictFailed, bad: 2, total: 2}},
		},
		{
			// Two of four HCAs dead spoil 10 of 12 cells, yet node-03 and
			// node-04 talk fine: two HCAs, not the rail.
			name: "two hcas down of four", nodes: 4, rails: 1,
			break_: func(f *fixture) {
				f.touching("node-01", 0, fail(probe.ClassPortDown, "down", ""))
				f.touching("node-02", 0, fail(probe.ClassPortDown, "down", ""))
			},
			want: []want{
				{kind: KindHCA, node: "node-01", device: "mlx5_0", class: probe.ClassPortDown, verdict: VerdictFailed, bad: 6, total: 6},
				{kind: KindHCA, node: "node-02", device: "mlx5_0", class: probe.ClassPortDown, verdict: VerdictFailed, bad: 6, total: 6},
			},
		},
		{
			name: "hca bad only as initiator", nodes: 8, rails: 1,
			break_: func(f *fixture) {
				for i := range f.cells {
					if f.cells[i].Src == "node-08" {
						fail(probe.ClassRetryExceeded, "retry exceeded", "")(&f.cells[i])
					}
				}
			},
			want: []want{{kind: KindHCA, node: "node-08", device: "mlx5_0", class: probe.ClassRetryExceeded,
				verdict: VerdictFailed, bad: 7, total: 7}},
		},
		{
			// Two HCAs, each failing against the other: the matrix cannot
			// tell which end is broken, so it blames only the pair.
			name: "two nodes, ambiguous", nodes: 2, rails: 1,
			break_: func(f *fixture) { f.touching("node-01", 0, fail(probe.ClassPortDown, "down", "")) },
			want: []want{{kind: KindPair, node: "node-01", peer: "node-02", class: probe.ClassPortDown,
				verdict: VerdictFailed, bad: 2, total: 2}},
		},
		{
			// ...unless the inventory says which port is down.
			name: "two nodes, port state decides", nodes: 2, rails: 1,
			break_: func(f *fixture) {
				f.touching("node-01", 0, fail(probe.ClassPortDown, "down", ""))
				f.nodes[1].Ports[0].State = "DOWN"
			},
			want: []want{{kind: KindHCA, node: "node-02", device: "mlx5_0", class: probe.ClassPortDown,
				verdict: VerdictFailed, bad: 2, total: 2}},
		},
		{
			name: "two nodes, membership decides", nodes: 2, rails: 2,
			break_: func(f *fixture) {
				f.touching("node-01", AllRails, fail(probe.ClassPeerLost, "no answer", ""))
				f.nodes[0].State = "dead"
			},
			want: []want{{kind: KindNode, node: "node-01", rail: AllRails, class: probe.ClassPeerLost,
				verdict: VerdictFailed, bad: 4, total: 4, fix: "worker on node-01"}},
		},
		{
			name: "node never measured", nodes: 6, rails: 2,
			break_: func(f *fixture) {
				f.drop(func(c *Cell) bool { return c.Src == "node-05" || c.Dst == "node-05" })
			},
			want: []want{{kind: KindNode, node: "node-05", rail: AllRails, verdict: VerdictUntested,
				bad: 20, total: 20, fix: "joined the sweep"}},
		},
		{
			// Two independent faults: the bigger one first, each cell
			// explained once, nobody else blamed.
			name: "hca down plus a bad pair", nodes: 8, rails: 2,
			break_: func(f *fixture) {
				f.touching("node-08", 0, fail(probe.ClassPortDown, "down", ""))
				fail(probe.ClassRetryExceeded, "retry exceeded", "")(f.cell("node-01", "node-02", 1))
			},
			want: []want{
				{kind: KindHCA, node: "node-08", device: "mlx5_0", rail: 0, class: probe.ClassPortDown, verdict: VerdictFailed, bad: 14, total: 14},
				{kind: KindPair, node: "node-01", peer: "node-02", rail: 1, class: probe.ClassRetryExceeded, verdict: VerdictFailed, bad: 1, total: 2},
			},
		},
		{
			// A dead node on a fabric whose rail 1 is down as well: rail 1
			// says nothing about the node, so it stays an HCA on rail 0.
			name: "rail down plus hca down", nodes: 8, rails: 2,
			break_: func(f *fixture) {
				for i := range f.cells {
					if f.cells[i].Rail == 1 {
						fail(probe.ClassRetryExceeded, "retry exceeded", "")(&f.cells[i])
					}
				}
				f.touching("node-02", 0, fail(probe.ClassPortDown, "down", ""))
			},
			want: []want{
				{kind: KindRail, rail: 1, class: probe.ClassRetryExceeded, verdict: VerdictFailed, bad: 56, total: 56},
				{kind: KindHCA, node: "node-02", device: "mlx5_0", rail: 0, class: probe.ClassPortDown, verdict: VerdictFailed, bad: 14, total: 14},
			},
		},
	}
}

func TestLocalize(t *testing.T) {
	for _, c := range localizeCases() {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(c.nodes, c.rails)
			c.break_(f)
			m := f.build()
			if m.Healthy != c.healthy {
				t.Errorf("healthy = %v, want %v (counts %v)", m.Healthy, c.healthy, m.Counts)
			}
			if len(m.Suspects) != len(c.want) {
				t.Fatalf("%d suspects, want %d:\n%s", len(m.Suspects), len(c.want), m.Summary())
			}
			for i, w := range c.want {
				w.check(t, i, m.Suspects[i])
				if s := m.Suspects[i]; s.Reason == "" || s.Evidence == "" || s.Fix == "" {
					t.Errorf("suspect %d lacks reason, evidence or fix: %+v", i, s)
				}
			}
		})
	}
}

// The requirement that matters most to an operator: one HCA down puts that
// HCA first and blames nobody else, on any fabric size.
func TestOneHCADownBlamesOnlyIt(t *testing.T) {
	for _, n := range []int{3, 4, 5, 8, 13, 32} {
		for _, rails := range []int{1, 2, 8} {
			t.Run(fmt.Sprintf("%dx%d", n, rails), func(t *testing.T) {
				f := newFixture(n, rails)
				victim, rail := nodeName(n/2), rails-1
				f.touching(victim, rail, fail(probe.ClassPortDown, "port down", ""))
				m := f.build()
				if m.Healthy || len(m.Suspects) != 1 {
					t.Fatalf("healthy=%v, suspects:\n%s", m.Healthy, m.Summary())
				}
				s := m.Suspects[0]
				if s.Kind != KindHCA || s.Node != victim || s.Rail != rail || s.Device != fmt.Sprintf("mlx5_%d", rail) ||
					s.Bad != 2*(n-1) || s.Total != 2*(n-1) {
					t.Fatalf("suspect %+v", s)
				}
			})
		}
	}
}

// Noise spread over a whole rail must not be pinned on some HCA.
func TestNoisyRailBlamesNoHCA(t *testing.T) {
	f := newFixture(8, 1)
	for i := range f.cells {
		if i%2 == 0 { // half the cells, spread over every row and column
			fail(probe.ClassRetryExceeded, "retry exceeded", "")(&f.cells[i])
		}
	}
	m := f.build()
	for _, s := range m.Suspects {
		if s.Kind != KindPair {
			t.Fatalf("noise blamed on %s %s:\n%s", s.Kind, s.Node, m.Summary())
		}
	}
	if len(m.Suspects) == 0 {
		t.Fatal("no suspects for 28 bad cells")
	}
}

// The same sweep in any input order gives the same suspects.
func TestLocalizeDeterministic(t *testing.T) {
	build := func(reverse bool) []Suspect {
		f := newFixture(8, 2)
		fail(probe.ClassRetryExceeded, "a", "")(f.cell("node-01", "node-02", 0))
		fail(probe.ClassTimeout, "b", "")(f.cell("node-03", "node-04", 0))
		fail(probe.ClassTimeout, "c", "")(f.cell("node-05", "node-06", 1))
		f.touching("node-07", 1, slow(4))
		if reverse {
			for i, j := 0, len(f.cells)-1; i < j; i, j = i+1, j-1 {
				f.cells[i], f.cells[j] = f.cells[j], f.cells[i]
			}
			for i, j := 0, len(f.nodes)-1; i < j; i, j = i+1, j-1 {
				f.nodes[i], f.nodes[j] = f.nodes[j], f.nodes[i]
			}
		}
		return f.build().Suspects
	}
	a, b := build(false), build(true)
	if fmt.Sprintf("%+v", a) != fmt.Sprintf("%+v", b) {
		t.Fatalf("order-dependent suspects:\n%+v\n%+v", a, b)
	}
	if len(a) != 4 || a[0].Kind != KindHCA || a[0].Node != "node-07" {
		t.Fatalf("suspects %+v", a)
	}
}
