package matrix

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/topology"
)

// tracedFabric is 12 nodes under three leaves (4 each) and two spines,
// one rail, every cell with a flow (with two leaves every flow up to a
// spine goes on down to the one other leaf, and no test could tell the
// two links apart). Its traced paths take the spine the test
// fixes (data over spine (s+d)%2, the responder's flow over the other),
// which the model's hash does not follow: a localizer that routed by the
// model would blame links the bad cells never crossed.
type tracedFabric struct {
	topo *topology.Topology
	f    *fixture
	tr   *Traced
}

func newTracedFabric(t *testing.T, avoid string) *tracedFabric {
	t.Helper()
	_, topo := fixtureTree(t, "nodes=12,rails=1,leaf=4,spines=2,oversub=2")
	tf := &tracedFabric{topo: topo, f: newFixture(12, 1), tr: &Traced{}}
	for i := range tf.f.cells {
		c := &tf.f.cells[i]
		s, d := nodeIndexOf(c.Src), nodeIndexOf(c.Dst)
		c.Flow, c.BackFlow = flowOf(s, d, 0), flowOf(d, s, 0)
		if s/4 == d/4 {
			continue
		}
		spine := (s + d) % 2
		if avoid != "" {
			spine = 1 // every flow keeps off spine-r0-00
		}
		tf.tr.Add(c.Src, c.Dst, 0, false, tf.path(t, s, d, spine))
		tf.tr.Add(c.Src, c.Dst, 0, true, tf.path(t, d, s, 1-spine+spine*b2i(avoid != "")))
	}
	return tf
}

// path is the links from node s's HCA over spine to node d's.
func (tf *tracedFabric) path(t *testing.T, s, d, spine int) []topology.Link {
	t.Helper()
	return tf.pathVia(t, func(n int) string { return fmt.Sprintf("leaf-r0-%02d", n/4) }, s, d, spine)
}

// The cells whose traced data path, or whose responder's, crosses
// leaf-r0-00 → spine-r0-01 lose packets: the link, in that direction, is
// the first suspect, and neither a node nor a pair. The same cells routed by the model (no traces) do not
// name it.
func TestTracedPathsNameTheLink(t *testing.T) {
	tf := newTracedFabric(t, "")
	bad := 0
	for i := range tf.f.cells {
		c := &tf.f.cells[i]
		s, d := nodeIndexOf(c.Src), nodeIndexOf(c.Dst)
		spine := (s + d) % 2
		if s/4 != d/4 && (s/4 == 0 && spine == 1 || d/4 == 0 && spine == 0) {
			c.Class, c.Error = probe.ClassRetryExceeded, &probe.Error{Class: probe.ClassRetryExceeded, Cause: "transport retry counter exceeded"}
			c.Latency, c.Bandwidth = nil, nil
			bad++
		}
	}
	m := AnalyseTraced(tf.topo, tf.tr, tf.f.nodes, nil, tf.f.cells, Thresholds{}).Materialize()
	if len(m.Suspects) == 0 {
		t.Fatalf("%d bad cells, no suspect", bad)
	}
	first := m.Suspects[0]
	if first.Kind != KindLink || len(first.Ends) != 2 || !strings.HasPrefix(first.Ends[0], "leaf-r0-00:") ||
		!strings.HasPrefix(first.Ends[1], "spine-r0-01:") || first.Direction != "one-way" {
		t.Fatalf("first suspect %s %q (%s, direction %q), want the link leaf-r0-00 -> spine-r0-01 one way", first.Kind, first.Ends, first.Reason, first.Direction)
	}
	for _, s := range m.Suspects[1:] {
		if s.Confidence >= m.Thresholds.ExcludeConfidence && s.Kind != KindLink {
			t.Errorf("the link's cells also made a confident %s suspect %s: %s", s.Kind, s.Node, s.Reason)
		}
	}
	model := AnalyseOn(tf.topo, tf.f.nodes, nil, tf.f.cells, Thresholds{}).Materialize()
	for _, s := range model.Suspects {
		if s.Kind == KindLink && strings.Join(s.Ends, " ") == strings.Join(first.Ends, " ") {
			t.Fatalf("the model's routes named %s too: the test does not tell traced paths from the model", s.Ends)
		}
	}
	if len(m.Warnings) != 0 {
		t.Fatalf("warnings %+v on a fabric whose every link carried traced flows", m.Warnings)
	}
}

// Every traced flow keeps off spine-r0-00 and every cell passes: the
// fabric is not failed, but the cables to that spine are reported unused,
// each as one warning for both directions; without traces nothing is.
func TestTracedPathsReportUnusedLinks(t *testing.T) {
	tf := newTracedFabric(t, "spine-r0-00")
	m := AnalyseTraced(tf.topo, tf.tr, tf.f.nodes, nil, tf.f.cells, Thresholds{}).Materialize()
	if m.Outcome() != OutcomePass {
		t.Fatalf("outcome %s, want pass: unused links are a warning", m.Outcome())
	}
	var got []string
	for _, w := range m.Warnings {
		if w.Kind != WarnLinkUnused || !strings.Contains(w.Reason, "either way") {
			t.Fatalf("warning %+v, want link-unused for both directions", w)
		}
		got = append(got, w.Link)
	}
	if len(got) != 3 || !strings.Contains(got[0], "spine-r0-00") || !strings.Contains(got[2], "spine-r0-00") {
		t.Fatalf("unused %q, want the three cables to spine-r0-00", got)
	}
	if lines := m.warningLines(); !strings.Contains(lines[0], "link-unused leaf-r0-00") {
		t.Fatalf("summary line %q", lines[0])
	}
	if w := AnalyseOn(tf.topo, tf.f.nodes, nil, tf.f.cells, Thresholds{}).Materialize().Warnings; len(w) != 0 {
		t.Fatalf("without traces: warnings %+v", w)
	}
}

// With two leaves every test up to a spine goes on down to the other
// leaf, so no test tells leaf-r0-00 -> spine-r0-01 from spine-r0-01 ->
// leaf-r0-01: the spine is named, with the cables it cannot be told from,
// and the one way its bad tests crossed it. A fault both ways gets no
// direction.
func TestTracedTwoLeavesNameTheWayThroughTheSpine(t *testing.T) {
	for _, both := range []bool{false, true} {
		tf, f, tr := twoLeaves(t, true)
		topo := tf.topo
		for i := range f.cells {
			c := &f.cells[i]
			s, d := nodeIndexOf(c.Src), nodeIndexOf(c.Dst)
			spine := (s + d) % 2
			// Bad: the tests that climbed from leaf-r0-00 to spine-r0-01
			// (their data, or their return path), and with both also
			// those that climbed to it from leaf-r0-01.
			if s/8 != d/8 && (s/8 == 0 && spine == 1 || d/8 == 0 && spine == 0 || both && (s/8 == 1 && spine == 1 || d/8 == 1 && spine == 0)) {
				c.Class, c.Error = probe.ClassRetryExceeded, &probe.Error{Class: probe.ClassRetryExceeded, Cause: "transport retry counter exceeded"}
				c.Latency, c.Bandwidth = nil, nil
			}
		}
		m := AnalyseTraced(topo, tr, f.nodes, nil, f.cells, Thresholds{}).Materialize()
		if len(m.Suspects) == 0 || m.Suspects[0].Kind != KindSwitch || m.Suspects[0].Switch != "spine-r0-01" {
			t.Fatalf("both ways %v: want switch spine-r0-01 first:\n%s", both, m.Summary())
		}
		s := m.Suspects[0]
		oneWay := s.Direction == "one-way" && strings.Contains(s.Note, "in over leaf-r0-00:10 -> spine-r0-01:1 and out over spine-r0-01:2 -> leaf-r0-01:10")
		if oneWay == both || both && s.Direction != "" {
			t.Fatalf("both ways %v: direction %q, note %q", both, s.Direction, s.Note)
		}
	}
}

// pathVia is the links from node s over spine to node d, leaf naming
// each node's leaf.
func (tf *tracedFabric) pathVia(t *testing.T, leaf func(int) string, s, d, spine int) []topology.Link {
	t.Helper()
	one := func(from, to string) topology.Link {
		l, err := tf.topo.TargetLinks("", from, to, true)
		if err != nil {
			t.Fatal(err)
		}
		return topology.Link(l[0])
	}
	sp := fmt.Sprintf("spine-r0-%02d", spine)
	return []topology.Link{one(nodeName(s)+"/mlx5_0", leaf(s)), one(leaf(s), sp), one(sp, leaf(d)), one(leaf(d), nodeName(d)+"/mlx5_0")}
}
