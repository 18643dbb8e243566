package cluster

import (
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// TestFaultScenarios runs each sim fault class through the whole stack
// (gossip, dispatch, worker sessions, raft, matrix) and checks the cell class
// or verdict on the faulted node and the suspect named first.
func TestFaultScenarios(t *testing.T) {
	cases := []struct {
		fault       string
		class       probe.Class
		verdict     matrix.Verdict
		suspectNode string
	}{
		{"node-02:loss=100%", probe.ClassRetryExceeded, matrix.VerdictFailed, "node-02"},
		{"node-03:gid=wrong", probe.ClassInvalidGID, matrix.VerdictFailed, "node-03"},
		{"node-04:lat=5x", probe.ClassOK, matrix.VerdictSlowLatency, "node-04"},
		{"node-05:bw=0.4", probe.ClassOK, matrix.VerdictLowBandwidth, "node-05"},
		{"node-06/mlx5_0:mtu=1024", probe.ClassMTUMismatch, matrix.VerdictFailed, "node-06"},
	}
	for _, tc := range cases {
		t.Run(tc.fault, func(t *testing.T) {
			cl := start(t, 6, tc.fault)
			_, m := sweep(t, cl)
			if m.Healthy || len(m.Suspects) == 0 || m.Suspects[0].Node != tc.suspectNode {
				t.Fatalf("want first suspect %s:\n%s", tc.suspectNode, m.Summary())
			}
			seen := 0
			for _, c := range m.Cells {
				if c.Src != tc.suspectNode || c.Dst == tc.suspectNode {
					continue
				}
				if c.Rail != 0 && tc.fault == "node-06/mlx5_0:mtu=1024" {
					continue
				}
				seen++
				if c.Class != tc.class || c.Verdict != tc.verdict {
					t.Errorf("%s->%s rail %d: class %s verdict %s, want %s/%s (%s)", c.Src, c.Dst, c.Rail,
						c.Class, c.Verdict, tc.class, tc.verdict, c.Reason)
				}
				if c.Class.Failed() && (c.Error == nil || c.Error.Cause == "" || c.Error.Fix == "") {
					t.Errorf("%s->%s: failure without cause and fix: %+v", c.Src, c.Dst, c.Error)
				}
			}
			if seen == 0 {
				t.Fatal("no cells from the faulted node")
			}
		})
	}
}
