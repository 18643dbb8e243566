package matrix

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func downNodes(f *fixture, rail int, names ...string) {
	for _, n := range names {
		f.touching(n, rail, fail(probe.ClassPortDown, "port down", ""))
	}
}

// Two nodes per leaf: a dead leaf is still named, but the matrix says out
// loud that it cannot tell it from two dead HCAs.
func groupOfTwoDown() *fixture {
	f := newFixture(8, 2)
	f.labelLeaves(2)
	downNodes(f, 0, "node-03", "node-04")
	return f
}

func TestGroupOfTwoIsLowConfidence(t *testing.T) {
	m := groupOfTwoDown().build()
	if len(m.Suspects) != 1 {
		t.Fatalf("suspects:\n%s", m.Summary())
	}
	s := m.Suspects[0]
	if s.Kind != KindSwitchGroup || s.Group != "leaf=L2" || s.Confidence > twoNodeGroup ||
		!strings.Contains(s.Note, "only 2 nodes share leaf=L2") {
		t.Fatalf("suspect %+v", s)
	}
	checkSuspectInvariants(t, m)
}

// Labels must not change the verdict on one dead HCA or one dead node,
// whatever the group size.
func TestGroupsKeepSingleFaults(t *testing.T) {
	for _, size := range []int{2, 3, 4, 8} {
		t.Run(fmt.Sprintf("leaf of %d", size), func(t *testing.T) {
			f := newFixture(16, 2)
			f.labelLeaves(size)
			downNodes(f, 1, "node-06")
			m := f.build()
			if len(m.Suspects) != 1 || m.Suspects[0].title() != "hca node-06/mlx5_1 (rail 1)" {
				t.Fatalf("hca down:\n%s", m.Summary())
			}
			f = newFixture(16, 2)
			f.labelLeaves(size)
			f.touching("node-06", AllRails, fail(probe.ClassPeerLost, "gone", ""))
			m = f.build()
			if len(m.Suspects) != 1 || m.Suspects[0].title() != "node node-06" {
				t.Fatalf("node dead:\n%s", m.Summary())
			}
		})
	}
}

// Two leaves whose border fails while both insides are fine: one of them
// is blamed, with the ambiguity stated.
func twoGroupsCut() *fixture {
	f := newFixture(8, 1)
	f.labelLeaves(4)
	f.onRail(0, func(c *Cell) {
		if (c.Src <= "node-04") != (c.Dst <= "node-04") {
			fail(probe.ClassRetryExceeded, "retry exceeded", "")(c)
		}
	})
	return f
}

func TestTwoGroupsCutIsAmbiguous(t *testing.T) {
	m := twoGroupsCut().build()
	if len(m.Suspects) != 1 {
		t.Fatalf("suspects:\n%s", m.Summary())
	}
	s := m.Suspects[0]
	if s.Kind != KindSwitchGroup || s.Confidence > ambiguousGroup || !strings.Contains(s.Note, "either group") ||
		!strings.Contains(s.Reason, "uplinks are the common factor") {
		t.Fatalf("suspect %+v", s)
	}
}

// Two dead leaves of three: two suspects; the healthy leaf, whose border
// cells to both fail, is not a third.
func twoGroupsDownOfThree() *fixture {
	f := newFixture(12, 1)
	f.labelLeaves(4)
	downNodes(f, 0, "node-01", "node-02", "node-03", "node-04", "node-09", "node-10", "node-11", "node-12")
	return f
}

func TestTwoGroupsDownOfThree(t *testing.T) {
	m := twoGroupsDownOfThree().build()
	var got []string
	for _, s := range m.Suspects {
		got = append(got, s.title())
	}
	if strings.Join(got, "|") != "switch-group leaf=L1 (rail 0)|switch-group leaf=L3 (rail 0)" {
		t.Fatalf("suspects %q\n%s", got, m.Summary())
	}
}

// A whole rail down is the rail's, even when every node has a leaf label.
func TestGroupsDoNotSplitARail(t *testing.T) {
	f := newFixture(16, 2)
	f.labelLeaves(4)
	f.onRail(1, fail(probe.ClassRetryExceeded, "retry exceeded", ""))
	m := f.build()
	if len(m.Suspects) != 1 || m.Suspects[0].Kind != KindRail {
		t.Fatalf("suspects:\n%s", m.Summary())
	}
}

// rackDownAcrossLeaves is a rack whose nodes sit behind both leaves,
// down on rail 0.
func rackDownAcrossLeaves() *fixture {
	f := newFixture(8, 1)
	for i := range f.nodes {
		f.nodes[i].Labels = map[string]string{"rack": fmt.Sprintf("r%d", i/4), "leaf": fmt.Sprintf("L%d", i%2)}
	}
	downNodes(f, 0, "node-01", "node-02", "node-03", "node-04") // rack r0, mixed leaves
	return f
}

func TestGroupLabelChoice(t *testing.T) {
	mk := func(label string) *Matrix {
		f := rackDownAcrossLeaves()
		th := DefaultThresholds()
		th.GroupLabel = label
		return Build(f.nodes, f.cells, th)
	}
	if m := mk("rack"); m.GroupLabel != "rack" || m.Suspects[0].Group != "rack=r0" {
		t.Fatalf("explicit rack:\n%s", m.Summary())
	}
	if m := mk(""); m.GroupLabel != "leaf" || m.Suspects[0].Kind == KindSwitchGroup {
		// leaf comes first automatically, and leaves do not explain a rack
		t.Fatalf("automatic (leaf):\n%s", m.Summary())
	}
	if m := mk("-"); m.GroupLabel != "" {
		t.Fatalf("off: group label %q", m.GroupLabel)
	} else {
		for _, s := range m.Suspects {
			if s.Kind == KindSwitchGroup {
				t.Fatalf("groups off, yet:\n%s", m.Summary())
			}
		}
	}
}

// Group suspects exclude all their members and carry them in JSON order.
func TestGroupMembersExcluded(t *testing.T) {
	f := newFixture(16, 2)
	f.labelLeaves(4)
	downNodes(f, 1, "node-05", "node-06", "node-07", "node-08")
	m := f.build()
	if got := m.Excluded(ExcludeOptions{}); strings.Join(got, ",") != "node-05,node-06,node-07,node-08" {
		t.Fatalf("excluded %v", got)
	}
	if s := m.Suspects[0]; strings.Join(s.Members, ",") != "node-05,node-06,node-07,node-08" {
		t.Fatalf("members %v", s.Members)
	}
}
