package topology

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestWritePlanRoundTrip: a generated tree written as a plan reads back
// to the same switches, HCAs and cables, and LoadFile tells the plan from
// ibnetdiscover output.
func TestWritePlanRoundTrip(t *testing.T) {
	for _, spec := range []string{"nodes=16,rails=2,leaf=4,spines=2", "nodes=24,rails=2,leaf=4,spines=2,pods=3,cores=4,ll=ib"} {
		topo := mustTree(t, spec)
		var b bytes.Buffer
		if err := topo.WritePlan(&b); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "plan.yaml")
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		back, err := LoadFile(path)
		if err != nil {
			t.Fatalf("%s: %v\n%s", spec, err, b.String())
		}
		names := func(t *Topology) []string {
			var out []string
			for c := range t.Cables {
				out = append(out, t.CableName(c))
			}
			return out
		}
		if back.LinkLayer != topo.LinkLayer || !reflect.DeepEqual(names(back), names(topo)) {
			t.Fatalf("%s: the plan reads back differently", spec)
		}
		for _, a := range topo.Switches {
			i, ok := back.Switch(a.Name)
			if z := back.Switches[i]; !ok || a.Tier != z.Tier || a.Plane != z.Plane || a.Pod != z.Pod {
				t.Errorf("%s: switch %+v reads back as %+v", spec, a, z)
			}
		}
		for _, a := range topo.HCAs {
			if _, ok := back.HCA(a.Node, a.Rail); !ok {
				t.Errorf("%s: HCA %+v is lost", spec, a)
			}
		}
	}
	ib, err := LoadFile("testdata/ibnet/fabric-2tier.txt")
	if err != nil || ib.LinkLayer != InfiniBand {
		t.Fatalf("ibnetdiscover output: %v", err)
	}
}
