package cluster

import (
	"strings"
	"testing"
)

// A fault injected into the running cluster shows in the next sweep, and
// healing clears it: the demo's way of breaking a fabric without a restart.
func TestInjectBreaksAndHeals(t *testing.T) {
	cl := start(t, 4)
	if info, m := sweep(t, cl); info.Healthy == nil || !*info.Healthy {
		t.Fatalf("before injection: healthy %v, suspects %v", info.Healthy, m.Suspects)
	}
	if err := cl.Inject([]string{"node-03/mlx5_0:down"}); err != nil {
		t.Fatal(err)
	}
	_, m := sweep(t, cl)
	if len(m.Suspects) == 0 || m.Suspects[0].Node != "node-03" || m.Suspects[0].Device != "mlx5_0" {
		t.Fatalf("after injection: suspects %+v, want node-03 mlx5_0 first", m.Suspects)
	}
	if err := cl.Inject(nil); err != nil {
		t.Fatal(err)
	}
	if info, m := sweep(t, cl); info.Healthy == nil || !*info.Healthy {
		t.Errorf("after healing: healthy %v, suspects %v", info.Healthy, m.Suspects)
	}
	if err := cl.Inject([]string{"node-99:down"}); err == nil || !strings.Contains(err.Error(), "names no node") {
		t.Errorf("a fault on a node the cluster lacks: err %v", err)
	}
	if err := cl.Inject([]string{"node-02:bogus"}); err == nil {
		t.Error("an unparsable fault was accepted")
	}
}
