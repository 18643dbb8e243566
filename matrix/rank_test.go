package matrix

import (
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// TestHardFailureRanksFirst: a suspect with a failed cell among its cells
// ranks ahead of one that is only slow at the same confidence tier, even
// with fewer bad cells (the lab's case: vm4 with 1 failed and 5 slow
// cells below vm1's low-bandwidth-only noise); confident suspects still
// come before weak ones.
func TestHardFailureRanksFirst(t *testing.T) {
	cases := []struct {
		name string
		in   []Suspect
		want string
	}{
		{"weak: a failed cell among slow ones beats more slow cells",
			[]Suspect{
				{Kind: KindNode, Node: "vm1", Verdict: VerdictLowBandwidth, Bad: 8, Confidence: 0.01},
				{Kind: KindNode, Node: "vm4", Verdict: VerdictSlowLatency, Bad: 6, HardFailures: 1, Confidence: 0.06},
			}, "vm4 vm1"},
		{"weak: a failed suspect beats a bigger slow one",
			[]Suspect{
				{Kind: KindPair, Node: "a", Peer: "b", Verdict: VerdictSlowLatency, Bad: 3, Confidence: 0.2},
				{Kind: KindPair, Node: "c", Peer: "d", Verdict: VerdictFailed, Bad: 1, Confidence: 0.2},
			}, "c a"},
		{"confident: failed, then slow with a failure, then slow",
			[]Suspect{
				{Kind: KindNode, Node: "slow", Verdict: VerdictSlowLatency, Bad: 40, Confidence: 0.9},
				{Kind: KindNode, Node: "mixed", Verdict: VerdictSlowLatency, Bad: 10, HardFailures: 2, Confidence: 0.9},
				{Kind: KindHCA, Node: "dead", Verdict: VerdictFailed, Bad: 5, Confidence: 0.9},
				{Kind: KindNode, Node: "weak", Verdict: VerdictFailed, Bad: 50, Confidence: 0.1},
			}, "dead mixed slow weak"},
	}
	for _, tc := range cases {
		s := append([]Suspect(nil), tc.in...)
		sortSuspects(s)
		var got []string
		for _, x := range s {
			got = append(got, x.Node)
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%s: order %s, want %s", tc.name, g, tc.want)
		}
	}
}

// TestSlowSuspectCountsItsFailures: an HCA whose cells are mostly slow but
// one failed carries that failure in HardFailures and ranks as hard.
func TestSlowSuspectCountsItsFailures(t *testing.T) {
	f := newFixture(8, 1)
	f.touching("node-04", 0, slow(5))
	fail(probe.ClassRetryExceeded, "transport retry counter exceeded", "check the link")(f.cell("node-04", "node-07", 0))
	m := f.build()
	if len(m.Suspects) == 0 {
		t.Fatalf("no suspect:\n%s", m.Summary())
	}
	s := m.Suspects[0]
	if s.Node != "node-04" || s.Verdict != VerdictSlowLatency || s.HardFailures != 1 {
		t.Fatalf("first suspect %s %s %s hard %d, want node-04 slow-latency with 1 hard failure:\n%s",
			s.Kind, s.Node, s.Verdict, s.HardFailures, m.Summary())
	}
}
