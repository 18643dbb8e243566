package matrix

import (
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// scheduleRounds gives every cell the round its pair met in: a round-robin
// tournament (n-1 rounds of n/2 pairs, both directions in one round), as
// the coordinator plans a sweep.
func (f *fixture) scheduleRounds() {
	n := len(f.nodes)
	round := map[[2]string]int{}
	pos := make([]int, n)
	for i := range pos {
		pos[i] = i
	}
	for r := 1; r < n; r++ {
		for k := 0; k < n/2; k++ {
			a, b := nodeName(pos[k]), nodeName(pos[n-1-k])
			round[[2]string{a, b}], round[[2]string{b, a}] = r, r
		}
		pos = append(pos[:1], append([]int{pos[n-1]}, pos[1:n-1]...)...) // rotate all but the first
	}
	for i := range f.cells {
		c := &f.cells[i]
		c.Round = round[[2]string{c.Src, c.Dst}]
	}
}

// from applies fn to node's cells on rail (AllRails: every rail) measured
// in round k or later.
func (f *fixture) from(node string, rail, k int, fn func(c *Cell)) {
	f.touching(node, rail, func(c *Cell) {
		if c.Round >= k {
			fn(c)
		}
	})
}

// TestFromRound: a fault that strikes mid-sweep blames the HCA (or node)
// from its round on, not the pairs it met afterwards.
// fromRoundCase breaks a 16 x 4 fabric whose cells carry the rounds of a
// round-robin plan, from some round on.
type fromRoundCase struct {
	name     string
	break_   func(f *fixture)
	kind     string
	node     string
	rail     int
	from     int
	class    probe.Class
	reason   string
	minConf  float64
	suspects int
}

func fromRoundCases() []fromRoundCase {
	return []fromRoundCase{
		{
			name:   "port down mid-sweep",
			break_: func(f *fixture) { f.from("node-05", 2, 9, fail(probe.ClassPortDown, "port 1 is DOWN", "")) },
			kind:   KindHCA, node: "node-05", rail: 2, from: 9, class: probe.ClassPortDown, suspects: 1, minConf: 0.85,
			reason: "node-05/mlx5_2 fails on rail 2 from round 9 on: 14/14 of its cells since then are bad, with 7 peers (its 16 cells before were ok)",
		},
		{
			name: "worker killed mid-sweep: every rail from its round on",
			break_: func(f *fixture) {
				f.from("node-11", AllRails, 12, fail(probe.ClassPeerLost, "worker did not answer", ""))
				f.nodes[10].State = "dead"
			},
			kind: KindNode, node: "node-11", rail: AllRails, from: 12, class: probe.ClassPeerLost, suspects: 1, minConf: 0.95,
			reason: "failing from round 12 on (its earlier cells were ok)",
		},
		{
			name:   "device removed in the last rounds: two peers are enough",
			break_: func(f *fixture) { f.from("node-02", 0, 14, fail(probe.ClassRetryExceeded, "device removed", "")) },
			// Two witnesses since the fault: support 2/3.
			kind: KindHCA, node: "node-02", rail: 0, from: 14, class: probe.ClassRetryExceeded, suspects: 1,
			reason: "from round 14 on", minConf: 0.65,
		},
		{
			name:   "one peer only is still a pair",
			break_: func(f *fixture) { f.from("node-02", 0, 15, fail(probe.ClassRetryExceeded, "retry exceeded", "")) },
			kind:   KindPair, rail: 0, class: probe.ClassRetryExceeded, suspects: 1,
		},
	}
}

func TestFromRound(t *testing.T) {
	for _, c := range fromRoundCases() {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(16, 4)
			f.scheduleRounds()
			c.break_(f)
			m := f.build()
			if len(m.Suspects) != c.suspects {
				t.Fatalf("%d suspects, want %d:\n%s", len(m.Suspects), c.suspects, m.Summary())
			}
			s := m.Suspects[0]
			if s.Kind != c.kind || (c.node != "" && s.Node != c.node) || s.Rail != c.rail || s.FromRound != c.from || s.Class != c.class {
				t.Fatalf("top suspect %+v\nwant %s %s rail %d from %d class %s\n%s", s, c.kind, c.node, c.rail, c.from, c.class, m.Summary())
			}
			if c.from > 0 && (!strings.Contains(s.Reason, c.reason) || s.Confidence < c.minConf) {
				t.Fatalf("reason %q (want %q in it), confidence %v", s.Reason, c.reason, s.Confidence)
			}
			checkSuspectInvariants(t, m)
		})
	}
}
