package sim

import (
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/counters"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// Egress loss on one HCA shows in its own counters as loss and timeouts
// on its egress side; a clean pair's counters do not move.
func TestCountersFollowTheTraffic(t *testing.T) {
	fab := mustFabric(t, Config{Faults: faults(t, "node-02/mlx5_0:loss=3%@egress")})
	p := probe.DefaultTestParams()
	before := map[string]counters.Snapshot{}
	for _, n := range []string{"node-01", "node-02", "node-03", "node-04"} {
		s, err := fab.Node(n).Counters("mlx5_0", 1)
		if err != nil {
			t.Fatal(err)
		}
		before[n] = s
	}
	for _, pr := range [][2]string{{"node-02", "node-01"}, {"node-01", "node-02"}, {"node-03", "node-04"}, {"node-04", "node-03"}} {
		runPair(t, fab, pr[0], pr[1], 0, p)
	}
	delta := func(n string) counters.Delta {
		s, err := fab.Node(n).Counters("mlx5_0", 1)
		if err != nil {
			t.Fatal(err)
		}
		d, err := counters.Diff(before[n], s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	bad := delta("node-02")
	k, side, ok := bad.Evidence().Dominant()
	if !ok || (k != counters.Loss && k != counters.Timeout) || side != counters.Egress {
		t.Errorf("node-02's evidence %v %v %v (%+v), want loss or timeout on its egress side", k, side, ok, bad.Values)
	}
	if s := bad.Explain(); s == "" {
		t.Error("no explanation for node-02's counters")
	} else {
		t.Log(s)
	}
	for _, n := range []string{"node-03", "node-04"} {
		if d := delta(n); !d.Evidence().Empty() {
			t.Errorf("%s tested only clean paths but counted %+v", n, d.Values)
		}
	}
	if d := delta("node-01"); d.Evidence().Empty() {
		t.Error("node-01 exchanged traffic with the lossy HCA but counted nothing")
	}
	if _, err := fab.Node("node-01").Counters("mlx5_9", 1); err == nil {
		t.Error("counters of an HCA the preset lacks")
	}
}
