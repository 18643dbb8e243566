package matrix

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/topology"
)

func TestLossStep(t *testing.T) {
	path := make([]topology.Link, 4) // three switches: TTL 1..3
	h := func(ans ...int) []HopLoss {
		out := make([]HopLoss, len(ans))
		for i, a := range ans {
			out[i] = HopLoss{Sent: 300, Answered: a}
		}
		return out
	}
	for _, c := range []struct {
		name string
		hops []HopLoss
		at   int
		ok   bool
	}{
		{"clean", h(300, 300, 300), 0, false},
		{"one late answer a hop", h(299, 300, 299), 0, false},
		{"lossy second link", h(300, 285, 284), 1, true},
		{"lossy host cable", h(284, 285, 283), 0, true},
		{"lossy third link", h(300, 299, 280), 2, true},
		{"policed second hop", h(300, 250, 300), 0, false},
		{"policed everywhere", h(20, 22, 19), 0, false},
		{"a few late answers everywhere", h(298, 297, 298), 0, false},
		{"too few probes to tell", []HopLoss{{10, 10}, {10, 9}, {10, 9}}, 0, false},
	} {
		at, ok := lossStep(path, c.hops)
		if ok != c.ok || ok && at != c.at {
			t.Errorf("%s: step at %d (%v), want %d (%v)", c.name, at, ok, c.at, c.ok)
		}
	}
}

// twoLeaves is 16 nodes under two leaves and two spines: every test that
// climbs leaf-r0-00 -> spine-r0-01 goes on down spine-r0-01 -> leaf-r0-01,
// so tests alone cannot tell those links apart. A test's data crosses
// spine (s+d)%2; its responder's flow the same one, or with crossed the
// other.
func twoLeaves(t *testing.T, crossed bool) (*tracedFabric, *fixture, *Traced) {
	t.Helper()
	_, topo := fixtureTree(t, "nodes=16,rails=1,leaf=8,spines=2,oversub=4")
	tf := &tracedFabric{topo: topo}
	leaf := func(n int) string { return fmt.Sprintf("leaf-r0-%02d", n/8) }
	f, tr := newFixture(16, 1), &Traced{}
	for i := range f.cells {
		c := &f.cells[i]
		s, d := nodeIndexOf(c.Src), nodeIndexOf(c.Dst)
		c.Flow, c.BackFlow = flowOf(s, d, 0), flowOf(d, s, 0)
		if s/8 == d/8 {
			continue
		}
		spine := (s + d) % 2
		tr.Add(c.Src, c.Dst, 0, false, tf.pathVia(t, leaf, s, d, spine))
		tr.Add(c.Src, c.Dst, 0, true, tf.pathVia(t, leaf, d, s, spine^b2i(crossed)))
	}
	return tf, f, tr
}

// One failed test over leaf-r0-00 -> spine-r0-01 -> leaf-r0-01 is too
// little for the counts; its flow's hop loss (answers thin out from the
// spine on) names the link leaf-r0-00 -> spine-r0-01 with its drop, and
// the pair is not a suspect. A spine that only polices its answers names
// nothing; a finding no bad test crossed is a warning.
func TestHopLossNamesTheLink(t *testing.T) {
	tf, f, tr := twoLeaves(t, false)
	src, dst := nodeName(1), nodeName(8) // (1+8)%2: over spine-r0-01
	for i := range f.cells {
		if c := &f.cells[i]; c.Src == src && c.Dst == dst {
			c.Class, c.Error = probe.ClassRetryExceeded, &probe.Error{Class: probe.ClassRetryExceeded, Cause: "transport retry counter exceeded"}
			c.Latency, c.Bandwidth = nil, nil
		}
	}
	for _, c := range []struct {
		name  string
		hops  []HopLoss
		named bool
	}{
		{"lossy", []HopLoss{{300, 300}, {300, 285}, {300, 284}}, true},
		{"policed", []HopLoss{{300, 300}, {300, 240}, {300, 300}}, false},
	} {
		tr.AddLoss(src, dst, 0, false, c.hops)
		m := AnalyseTraced(tf.topo, tr, f.nodes, nil, f.cells, Thresholds{}).Materialize()
		if !c.named {
			for _, s := range m.Suspects {
				if s.Drop > 0 {
					t.Errorf("%s: named %q from hop loss: %s", c.name, s.Ends, s.Reason)
				}
			}
			continue
		}
		if len(m.Suspects) == 0 {
			t.Fatalf("%s: no suspect", c.name)
		}
		s := m.Suspects[0]
		if s.Kind != KindLink || len(s.Ends) != 2 || !strings.HasPrefix(s.Ends[0], "leaf-r0-00:") || !strings.HasPrefix(s.Ends[1], "spine-r0-01:") ||
			s.Direction != "one-way" || math.Abs(s.Drop-0.05) > 0.001 || !strings.Contains(s.Reason, "hop loss") {
			t.Fatalf("%s: first suspect %s %q direction %q drop %.3f: %s\n%s", c.name, s.Kind, s.Ends, s.Direction, s.Drop, s.Reason, m.Summary())
		}
		var csv strings.Builder
		if err := m.WriteCables(&csv); err != nil || !strings.Contains(csv.String(), "drops 5.0 % of the packets through it (hop loss)") {
			t.Errorf("%s: the technician's CSV (%v):\n%s", c.name, err, csv.String())
		}
		for _, o := range m.Suspects[1:] {
			if o.Kind == KindPair || o.Kind == KindHCA {
				t.Errorf("%s: the link's test also made a %s suspect %s: %s", c.name, o.Kind, o.Node, o.Reason)
			}
		}
	}

	tf2, clean, tr2 := twoLeaves(t, false)
	tr2.AddLoss(src, dst, 0, false, []HopLoss{{300, 300}, {300, 285}, {300, 284}})
	m := AnalyseTraced(tf2.topo, tr2, clean.nodes, nil, clean.cells, Thresholds{}).Materialize()
	var w *Warning
	for i := range m.Warnings {
		if m.Warnings[i].Kind == WarnLinkLoss {
			w = &m.Warnings[i]
		}
	}
	if !m.Healthy || len(m.Suspects) > 0 || w == nil || !strings.Contains(w.Link, "leaf-r0-00:") || !strings.Contains(w.Reason, "5.0 %") {
		t.Fatalf("no bad test: healthy %v, %d suspects, warning %+v", m.Healthy, len(m.Suspects), w)
	}
}
