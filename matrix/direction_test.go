package matrix

import (
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// rowCol applies out to node's cells as initiator and in to its cells as
// target, on rail (AllRails: every rail).
func (f *fixture) rowCol(node string, rail int, out, in func(c *Cell)) {
	for i := range f.cells {
		c := &f.cells[i]
		if rail != AllRails && c.Rail != rail {
			continue
		}
		switch {
		case c.Src == node && out != nil:
			out(c)
		case c.Dst == node && in != nil:
			in(c)
		}
	}
}

// TestDirection: a blamed HCA whose cells are much worse one way is an
// egress or ingress problem, with the gap in its reason and the side's
// checks in its fix; symmetric faults and mild gaps say no direction.
// directionCase breaks a 16 x 4 fabric and names the top suspect, its
// direction and what its reason and fix must say.
type directionCase struct {
	name      string
	break_    func(f *fixture)
	kind      string
	node      string
	rail      int
	dir       string
	minRatio  float64
	reason    string // in the reason
	fix       string // in the fix
	suspects  int
	wantClass probe.Class
}

func directionCases() []directionCase {
	retry := fail(probe.ClassRetryExceeded, "retry exceeded", "")
	return []directionCase{
		{
			name:   "egress loss: the row collapses, the column dips",
			break_: func(f *fixture) { f.rowCol("node-05", 2, scaleBW(0.001), scaleBW(0.15)) },
			kind:   KindHCA, node: "node-05", rail: 2, dir: dirEgress, minRatio: 100,
			reason: "node-05/mlx5_2 egress: as initiator 0.392 Gb/s median vs 58.7 Gb/s as target (150x)",
			fix:    "node-05/mlx5_2's transmit side", suspects: 1,
		},
		{
			name:   "ingress loss: the column collapses",
			break_: func(f *fixture) { f.rowCol("node-09", 0, scaleBW(0.3), scaleBW(0.002)) },
			kind:   KindHCA, node: "node-09", rail: 0, dir: dirIngress, minRatio: 100,
			reason: "node-09/mlx5_0 ingress: as initiator", fix: "receive side", suspects: 1,
		},
		{
			name:   "a dead transmit lane: only the row fails",
			break_: func(f *fixture) { f.rowCol("node-03", 1, retry, nil) },
			kind:   KindHCA, node: "node-03", rail: 1, dir: dirEgress, minRatio: 15,
			reason: "failed 15/15 as initiator vs 0/15 as target (at least 15x)", fix: "transmit side", suspects: 1,
			wantClass: probe.ClassRetryExceeded,
		},
		{
			name:   "receive side failing only as target",
			break_: func(f *fixture) { f.rowCol("node-12", 3, nil, retry) },
			kind:   KindHCA, node: "node-12", rail: 3, dir: dirIngress, minRatio: 15,
			reason: "node-12/mlx5_3 ingress: failed 0/15 as initiator vs 15/15 as target", fix: "receive side",
			suspects: 1, wantClass: probe.ClassRetryExceeded,
		},
		{
			name:   "latency one way: slow as initiator",
			break_: func(f *fixture) { f.rowCol("node-07", 0, slow(12), slow(3)) },
			kind:   KindHCA, node: "node-07", rail: 0, dir: dirEgress, minRatio: 3.5,
			reason: "as initiator p50", fix: "transmit side", suspects: 1,
		},
		{
			name:   "every HCA of a node loses its egress",
			break_: func(f *fixture) { f.rowCol("node-14", AllRails, scaleBW(0.01), scaleBW(0.5)) },
			kind:   KindNode, node: "node-14", rail: AllRails, dir: dirEgress, minRatio: 45,
			reason: "node-14 egress: on all 4 HCAs", fix: "transmit side", suspects: 1,
		},
		{
			name:   "symmetric: a port down has no direction",
			break_: func(f *fixture) { f.touching("node-05", 2, fail(probe.ClassPortDown, "down", "")) },
			kind:   KindHCA, node: "node-05", rail: 2, suspects: 1, wantClass: probe.ClassPortDown,
		},
		{
			name:   "a gap under 2x is not a direction",
			break_: func(f *fixture) { f.rowCol("node-06", 1, scaleBW(0.4), scaleBW(0.6)) },
			kind:   KindHCA, node: "node-06", rail: 1, suspects: 1,
		},
	}
}

func TestDirection(t *testing.T) {
	for _, c := range directionCases() {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(16, 4)
			c.break_(f)
			m := f.build()
			if len(m.Suspects) != c.suspects {
				t.Fatalf("%d suspects, want %d:\n%s", len(m.Suspects), c.suspects, m.Summary())
			}
			s := m.Suspects[0]
			if s.Kind != c.kind || s.Node != c.node || s.Rail != c.rail || s.Direction != c.dir || s.Class != c.wantClass {
				t.Fatalf("top suspect %+v, want %s %s rail %d direction %q class %q", s, c.kind, c.node, c.rail, c.dir, c.wantClass)
			}
			if c.dir == "" {
				if s.DirectionRatio != 0 || strings.Contains(s.Reason, "egress") || strings.Contains(s.Reason, "ingress") {
					t.Fatalf("a direction without one: %+v", s)
				}
				return
			}
			if s.DirectionRatio < c.minRatio || !strings.Contains(s.Reason, c.reason) || !strings.Contains(s.Fix, c.fix) {
				t.Fatalf("ratio %v (want >= %v)\nreason %q (want %q in it)\nfix %q (want %q in it)",
					s.DirectionRatio, c.minRatio, s.Reason, c.reason, s.Fix, c.fix)
			}
			checkSuspectInvariants(t, m)
		})
	}
}
