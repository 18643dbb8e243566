package links

import (
	"context"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/testkit/procstat"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/rigs/judge"
	"github.com/rdmamesh/rdmamesh/topology"
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
		cfg := Config{Tree: tree, Preset: tc.preset, Runs: 2, Seed: 11, Params: testParams()}
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

// TestStoreJudgesAsCells: the matrix judges the sparse store exactly as
// the same tests handed over as matrix.Cell values, for every pair and
// for a fabric sweep's cells, and a run's results do not depend on how
// its rows were spread over the cores.
func TestStoreJudgesAsCells(t *testing.T) {
	for _, pattern := range []string{"", PatternFabric} {
		t.Run("pattern="+pattern, func(t *testing.T) { storeJudgesAsCells(t, pattern) })
	}
}

func storeJudgesAsCells(t *testing.T, pattern string) {
	t.Helper()
	ctx := context.Background()
	cfg := Config{Tree: "nodes=64,rails=2,leaf=8,spines=4", Preset: "roce-2x100", Seed: 3, Params: testParams(), Pattern: pattern}
	topo, spec, names, planned := testTree(t, cfg)
	faults := append(pick(topo, rand.New(rand.NewPCG(1, 2)), Kind{Effect: "flap=20%", Target: "link"}, 2),
		injected{spec: "switch=spine-r1-01:loss=5%"}, injected{spec: "cable=node-07/mlx5_1~leaf-r1-00:bw=0.5"})
	rails := map[int]bool{0: true, 1: true}
	got, err := sweep(ctx, cfg, topo, spec, names, faults, rails, cfg.Seed, planned)
	if err != nil {
		t.Fatal(err)
	}
	again, err := sweep(ctx, cfg, topo, spec, names, faults, rails, cfg.Seed, planned)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Suspects, again.Suspects) {
		t.Errorf("one seed, two results:\n  %+v\n  %+v", got.Suspects, again.Suspects)
	}

	var specs []string
	for _, f := range faults {
		specs = append(specs, f.spec)
	}
	fs, err := sim.ParseFaults(specs)
	if err != nil {
		t.Fatal(err)
	}
	simCfg := sim.Config{Preset: cfg.Preset, Seed: cfg.Seed, Faults: fs, Topology: topo}
	fab, err := sim.New(simCfg)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := judge.Nodes(ctx, fab, names)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		cells []matrix.Cell
	)
	put := func(src, dst int, c *matrix.Cell) {
		mu.Lock()
		cells = append(cells, *c)
		mu.Unlock()
	}
	for rail := range 2 {
		if planned != nil {
			err = measureCells(ctx, cfg, simCfg, names, rail, planned[rail], put)
		} else {
			err = measureRail(ctx, cfg, simCfg, names, rail, put)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	th := matrix.DefaultThresholds()
	th.TestedOnly = true
	th.SteeredLinks = planned != nil
	want := matrix.AnalyseOn(topo, nodes, nil, cells, th)

	if len(want.Suspects) < 3 || want.Counts[matrix.VerdictFailed] == 0 {
		t.Fatalf("the faults left too little to compare: %d suspects, counts %v", len(want.Suspects), want.Counts)
	}
	for what, pair := range map[string][2]any{
		"suspects":     {got.Suspects, want.Suspects},
		"counts":       {got.Counts, want.Counts},
		"node rollups": {got.NodeRollups, want.NodeRollups},
		"rail rollups": {got.RailRollups, want.RailRollups},
		"noise":        {got.Noise, want.Noise},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("%s differ:\n  store %+v\n  cells %+v", what, pair[0], pair[1])
		}
	}
}

// TestHeapGuard: a run whose heap would pass the limit stops, saying so:
// before planning runs on a tree whose analysis cannot fit, and before an
// analysis that reads the N x N grid though the fabric sweep's plane is
// small. Faults go only on the planes whose analysis fits.
func TestHeapGuard(t *testing.T) {
	ctx := context.Background()
	cfg := Config{Tree: "nodes=32,rails=2,leaf=8,spines=4", Preset: "roce-2x100", Runs: 1, Seed: 1, Params: testParams(), MaxHeap: 1 << 10}
	_, err := Measure(ctx, cfg, Kinds()[:2])
	if err == nil || !strings.Contains(err.Error(), "planning the runs on "+cfg.Tree+": the heap would reach") ||
		!strings.Contains(err.Error(), "limit (Config.MaxHeap, -max-heap-gb); run stopped") {
		t.Fatalf("a 1 kB heap limit: %v", err)
	}

	// 512 nodes: a plane is 0.8 MB, the analysis of one rail 9.7 MB and
	// of two 11.5.
	cfg = Config{Tree: "nodes=512,rails=2,leaf=32,spines=16", Preset: "roce-2x100", Seed: 1, Params: testParams(), Pattern: PatternFabric}
	topo, spec, names, planned := testTree(t, cfg)
	runtime.GC()
	one := procstat.HeapObjects() + 2*planeBytes(512, len(planned[0])) + analysisBytes(512, 1)
	for _, tc := range []struct {
		limit uint64
		want  int
	}{{one + 900<<10, 1}, {one + 3<<20, 2}} {
		cfg.MaxHeap = tc.limit
		if got, err := fitPlanes(cfg, len(names), 2, planned); got != tc.want || err != nil {
			t.Errorf("a limit %.1f MB above one rail's analysis: %d planes (%v), want %d", float64(tc.limit-one)/1e6, got, err, tc.want)
		}
	}

	runtime.GC()
	cfg.MaxHeap = procstat.HeapObjects() + 6<<20
	_, err = sweep(ctx, cfg, topo, spec, names, nil, map[int]bool{0: true}, 1, planned)
	if err == nil || !strings.Contains(err.Error(), "analysing on "+cfg.Tree+": the heap would reach") {
		t.Fatalf("a limit 6 MB above the heap: %v", err)
	}
}

// testTree is cfg's tree, its preset, its nodes and, for the fabric
// pattern, its planned cells.
func testTree(t *testing.T, cfg Config) (*topology.Topology, sim.PresetSpec, []string, map[int][]steeredCell) {
	t.Helper()
	ft, err := topology.ParseFatTree(cfg.Tree)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := ft.Generate()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := sim.Preset(cfg.Preset)
	if err != nil {
		t.Fatal(err)
	}
	names := ft.NodeNames()
	var planned map[int][]steeredCell
	if cfg.Pattern == PatternFabric {
		if planned, err = fabricCells(topo, names, ft.Rails); err != nil {
			t.Fatal(err)
		}
	}
	return topo, spec, names, planned
}

func testParams() probe.TestParams {
	return probe.TestParams{LatencySize: 8, LatencyIters: 50, Warmup: 5, BWSize: 65536, BWIters: 20, TxDepth: 16, Timeout: 5 * time.Second}
}
