package links

import (
	"context"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// TestMeasure runs every fault type on a small tree: each seeded run must
// name exactly its injected parts, and the healthy runs none.
func TestMeasure(t *testing.T) {
	for _, tc := range []struct{ tree, preset string }{
		{"nodes=32,rails=2,leaf=8,spines=4", "roce-2x100"},
		{"nodes=48,rails=2,leaf=4,spines=2,pods=3,cores=4", "roce-2x100"},
		// InfiniBand routes by destination: a dead spine fails every test
		// towards the HCAs routed over it, which must not read as dead ports.
		{"nodes=32,rails=8,leaf=8,spines=4,ll=ib", "ib-8x400"},
	} {
		tree := tc.tree
		cfg := Config{Tree: tree, Preset: tc.preset, Runs: 2, Seed: 11,
			Params: probe.TestParams{LatencySize: 8, LatencyIters: 50, Warmup: 5, BWSize: 65536, BWIters: 20, TxDepth: 16, Timeout: 5 * time.Second}}
		rows, err := Measure(context.Background(), cfg, Kinds())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Clean && r.Healthy != r.Runs || !r.Clean && r.Hit != r.Runs || r.WrongNamed > 0 {
				t.Errorf("%s, %s: %d of %d runs right, %d healthy parts named, %d runs without link suspects; misses:\n%v",
					tree, r.Name, r.Hit, r.Runs, r.WrongNamed, r.Healthy, r.Misses)
			}
		}
	}
}
