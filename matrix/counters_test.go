package matrix

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/counters"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func knownAt(name, dir string) uint8 {
	for i, d := range counters.Known {
		if d.Name == name && d.Dir == dir {
			return uint8(i)
		}
	}
	panic(name)
}

// An HCA whose cells fail and whose port counted retransmissions on its
// egress side: the suspect quotes the counters, names the side, and their
// fix leads. A healthy node's counters change nothing.
// countersSweep is an 8 x 2 fabric whose node-05/mlx5_1 fails and whose
// port counted retransmissions from round 3 on, beside a healthy port
// that counted a few CNPs.
func countersSweep() ([]Node, []Cell) {
	const n = 8
	var nodes []Node
	var cells []Cell
	for i := range n {
		nd := Node{Name: fmt.Sprintf("node-%02d", i+1), State: "alive"}
		for r := range 2 {
			nd.Ports = append(nd.Ports, probe.Port{Device: fmt.Sprintf("mlx5_%d", r), Port: 1, Rail: r, LinkLayer: "InfiniBand",
				State: "ACTIVE", RateGbps: 400, Usable: true})
		}
		nodes = append(nodes, nd)
	}
	nodes[4].Counters = []PortCounters{{Rail: 1, Device: "mlx5_1", Port: 1, FromRound: 3, Counts: []counters.Count{
		{Index: knownAt("local_ack_timeout_err", "hw_counters"), N: 120}, {Index: knownAt("packet_seq_err", "hw_counters"), N: 900}}}}
	nodes[1].Counters = []PortCounters{{Rail: 0, Device: "mlx5_0", Port: 1, Counts: []counters.Count{
		{Index: knownAt("np_cnp_sent", "hw_counters"), N: 5}}}} // healthy: not a suspect, nothing to quote
	for r := range 2 {
		for s := range n {
			for d := range n {
				if s == d {
					continue
				}
				c := Cell{Src: nodes[s].Name, Dst: nodes[d].Name, Rail: r, SrcDevice: fmt.Sprintf("mlx5_%d", r), DstDevice: fmt.Sprintf("mlx5_%d", r),
					Round: 1 + (s+d)%7, Class: probe.ClassOK, Latency: &probe.Latency{Samples: 100, P50Ns: 2000, P99Ns: 2500}}
				if r == 1 && (s == 4 || d == 4) {
					c.Class, c.Latency = probe.ClassRetryExceeded, nil
					c.Error = &probe.Error{Class: probe.ClassRetryExceeded, Cause: "transport retry counter exceeded", Fix: "check the link"}
				}
				cells = append(cells, c)
			}
		}
	}
	return nodes, cells
}

func TestSuspectQuotesCounters(t *testing.T) {
	nodes, cells := countersSweep()
	m := Build(nodes, cells, DefaultThresholds())
	if len(m.Suspects) == 0 {
		t.Fatal("no suspects")
	}
	s := m.Suspects[0]
	t.Logf("reason: %s\nfix: %s", s.Reason, s.Fix)
	if s.Kind != KindHCA || s.Node != "node-05" || s.Device != "mlx5_1" {
		t.Fatalf("first suspect %+v", s)
	}
	for _, w := range []string{"; counters: mlx5_1 port 1 counted", "retransmitted", "egress side", "packets lost", "from round 3"} {
		if !strings.Contains(s.Reason, w) {
			t.Errorf("reason %q lacks %q", s.Reason, w)
		}
	}
	if !strings.HasPrefix(s.Fix, "look for drops on this port's path") && !strings.HasPrefix(s.Fix, "the path from this port drops") {
		t.Errorf("fix %q does not lead with the counters' fix", s.Fix)
	}
	for _, o := range m.Suspects {
		if o.Node == "node-02" {
			t.Errorf("a healthy node with a few CNPs became a suspect: %+v", o)
		}
	}
}

// A port that flaps: its cells with peers met it down in two episodes and
// passed the rest of the sweep, too few to blame it on the cells alone;
// its own link_downed counter moved 8 times. It is the first suspect, as
// flapping, with the rounds its cells failed in, confident enough to be
// excluded, and no healthy node is.
func TestFlappingPortIsNamed(t *testing.T) {
	f := newFixture(8, 1)
	for i := range f.cells {
		c := &f.cells[i]
		c.Round = 1 + (i % 7)
	}
	down := fail(probe.ClassPortDown, "its netdev eth1 is down", "bring the port up")
	f.touching("node-03", 0, func(c *Cell) {
		if c.Round == 2 || c.Round == 3 || c.Round == 6 {
			down(c)
		}
	})
	f.nodes[2].Counters = []PortCounters{{Rail: 0, Device: "mlx5_0", Port: 1, FromRound: 2, Counts: []counters.Count{
		{Index: knownAt("link_downed", "counters"), N: 8}}}}
	m := f.build()
	if len(m.Suspects) == 0 {
		t.Fatalf("no suspect:\n%s", m.Summary())
	}
	s := m.Suspects[0]
	if s.Node != "node-03" || s.Kind != KindHCA || s.Confidence < 0.9 || !strings.Contains(s.Reason, "flapping: its port counted its link going down 8 times") ||
		!strings.Contains(s.Reason, "rounds 2-3 and 6 (2 episode(s))") || !strings.Contains(s.Fix, "reseat or replace the cable") {
		t.Fatalf("first suspect %+v\n%s", s, m.Summary())
	}
	if ex := m.Excluded(ExcludeOptions{}); len(ex) != 1 || ex[0] != "node-03" {
		t.Fatalf("excluded %v\n%s", ex, m.Summary())
	}
}
