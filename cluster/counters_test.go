package cluster

import (
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/coordinator"
	"github.com/rdmamesh/rdmamesh/internal/api"
)

// TestEgressLossQuotesCounters is counter evidence on the whole stack:
// one-way loss on node-05's transmit side. The workers read their ports'
// counters around each test, the coordinator commits the moved counts
// through raft, and the first suspect is node-05 with its egress named and
// its counters quoted; the healthy nodes' ports counted nothing worth a
// node of its own.
func TestEgressLossQuotesCounters(t *testing.T) {
	cl := startSweepDefaults(t, 16, coordinator.SweepDefaults{Retests: 2}, "node-05:loss=3%@egress")
	info, m := sweepWith(t, cl, api.SweepRequest{Mode: "full"})
	if info.State != api.SweepDone || m.Healthy || len(m.Suspects) == 0 {
		t.Fatalf("sweep %s healthy=%v:\n%s", info.State, m.Healthy, m.Summary())
	}
	s := m.Suspects[0]
	if s.Node != "node-05" || (s.Kind != "node" && s.Kind != "hca") {
		t.Fatalf("first suspect %s %s, want node-05:\n%s", s.Kind, s.Node, m.Summary())
	}
	for _, w := range []string{"egress", "counters: ", "retransmitted", "local_ack_timeout_err"} {
		if !strings.Contains(s.Reason, w) {
			t.Fatalf("first suspect's reason lacks %q:\n%s", w, s.Reason)
		}
	}
	if !strings.Contains(s.Fix, "drops packets") {
		t.Fatalf("the counters' fix does not lead: %s", s.Fix)
	}
	counted := map[string]bool{}
	for _, n := range m.Nodes {
		if len(n.Counters) > 0 {
			counted[n.Name] = true
		}
	}
	if !counted["node-05"] {
		t.Fatalf("node-05 carries no counters; nodes with counters: %v", counted)
	}
}
