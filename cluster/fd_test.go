package cluster

import (
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/selffault"
)

// TestDescriptorsStayFlat runs sweep after sweep and requires the process's
// open descriptors to stay bounded by the cluster's size, not to grow with
// the peers each worker has met. Before the bounded pools every worker kept
// an idle connection (two descriptors in-process) to every peer it ever
// tested: 46 a node here, 150 a node at 128 nodes, and a 128-node demo ran
// out of descriptors and blamed the fabric.
func TestDescriptorsStayFlat(t *testing.T) {
	base := selffault.ReadBudget().Open
	if base < 0 {
		t.Skip("no /proc/self/fd")
	}
	const nodes = 24
	cl := start(t, nodes)
	// Listeners (gossip TCP + UDP, worker API), an idle coordinator →
	// worker connection at both ends, a few pooled peer connections at
	// both ends: about a dozen a node. The old pools needed 50.
	const perNode = 16
	limit := base + perNode*nodes
	var after []int
	for i := range 4 {
		info, _ := sweepWith(t, cl, api.SweepRequest{Mode: "quick"})
		if info.State != api.SweepDone {
			t.Fatalf("sweep %d ended %s: %s", i, info.State, info.Error)
		}
		after = append(after, selffault.ReadBudget().Open)
		// The leader sends each worker its tasks on a stream it keeps, at
		// most streamsKept (2) a worker once they idle.
		streams := 0
		for _, name := range cl.Names() {
			streams += cl.Worker(name).TaskStreams()
		}
		if streams == 0 || streams > 2*nodes {
			t.Errorf("after sweep %d: %d task streams open, want 1 to %d", i+1, streams, 2*nodes)
		}
	}
	t.Logf("descriptors: %d before the cluster, after each sweep %v (limit %d)", base, after, limit)
	for i, n := range after {
		if n > limit {
			t.Errorf("after sweep %d: %d descriptors open, want at most %d (%d a node)", i+1, n, limit, perNode)
		}
	}
	if grown := after[len(after)-1] - after[0]; grown > nodes {
		t.Errorf("descriptors grew by %d over %d sweeps: something keeps connections per sweep", grown, len(after)-1)
	}
}
