package matrix

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func TestDefaultThresholds(t *testing.T) {
	th := DefaultThresholds()
	if th.LatencyFactor != 2.1 || th.BandwidthFraction != 0.93 {
		t.Fatalf("got %+v", th)
	}
	// A zero Thresholds (config section omitted) must not mark everything slow.
	m := Build(newFixture(3, 1).nodes, newFixture(3, 1).cells, Thresholds{})
	if m.Thresholds != th || !m.Healthy {
		t.Fatalf("zero thresholds: got %+v healthy=%v", m.Thresholds, m.Healthy)
	}
}

func TestBuildAllOK(t *testing.T) {
	f := newFixture(8, 2)
	m := f.build()
	if m.Rails != 2 || len(m.Nodes) != 8 || len(m.Cells) != 8*7*2 {
		t.Fatalf("rails %d nodes %d cells %d", m.Rails, len(m.Nodes), len(m.Cells))
	}
	if !m.Healthy || m.Counts[VerdictOK] != 112 || len(m.Suspects) != 0 {
		t.Fatalf("healthy=%v counts=%v suspects=%v", m.Healthy, m.Counts, m.Suspects)
	}
	for _, v := range []Verdict{VerdictFailed, VerdictSlowLatency, VerdictLowBandwidth, VerdictUntested} {
		if n, ok := m.Counts[v]; !ok || n != 0 {
			t.Errorf("counts[%s] = %d, %v; want present and 0", v, n, ok)
		}
	}
	if len(m.NodeRollups) != 8 || len(m.RailRollups) != 2 {
		t.Fatalf("rollups: %d nodes, %d rails", len(m.NodeRollups), len(m.RailRollups))
	}
	for _, r := range m.NodeRollups {
		if r.Cells != 28 || r.OK != 28 || r.MinGbps < 390 || r.P50Ns < 1000 || r.P50Ns > 1060 {
			t.Errorf("node rollup %+v", r)
		}
	}
	for i, r := range m.RailRollups {
		if r.Key != railKey(i) || r.Cells != 56 || r.OK != 56 {
			t.Errorf("rail rollup %d: %+v", i, r)
		}
	}
}

// Every (src != dst, rail) appears once, in rail, src, dst order, whatever
// order nodes and cells came in.
func TestBuildOrderAndCompleteness(t *testing.T) {
	f := newFixture(6, 3)
	rng := rand.New(rand.NewSource(1))
	rng.Shuffle(len(f.nodes), func(i, j int) { f.nodes[i], f.nodes[j] = f.nodes[j], f.nodes[i] })
	rng.Shuffle(len(f.cells), func(i, j int) { f.cells[i], f.cells[j] = f.cells[j], f.cells[i] })
	m := f.build()
	for i, n := range m.Nodes {
		if n.Name != nodeName(i) {
			t.Fatalf("node %d is %s", i, n.Name)
		}
	}
	seen := map[[3]string]bool{}
	for i, c := range m.Cells {
		k := [3]string{c.Src, c.Dst, railKey(c.Rail)}
		if seen[k] || c.Src == c.Dst {
			t.Fatalf("cell %d %v duplicated or self", i, k)
		}
		seen[k] = true
		if i > 0 {
			p := m.Cells[i-1]
			if p.Rail > c.Rail || (p.Rail == c.Rail && (p.Src > c.Src || (p.Src == c.Src && p.Dst >= c.Dst))) {
				t.Fatalf("cell %d (%s->%s rail %d) after (%s->%s rail %d)", i, c.Src, c.Dst, c.Rail, p.Src, p.Dst, p.Rail)
			}
		}
	}
	if len(seen) != 6*5*3 {
		t.Fatalf("%d distinct cells, want 90", len(seen))
	}
}

// Rails come from the longest inventory or the highest rail in the cells;
// a node lacking a rail gets no cells there.
func TestBuildRailMembership(t *testing.T) {
	f := newFixture(4, 2)
	f.nodes[3].Ports = f.nodes[3].Ports[:1] // node-04 has rail 0 only
	f.drop(func(c *Cell) bool { return c.Rail == 1 && (c.Src == "node-04" || c.Dst == "node-04") })
	// A cell on rail 2, which no inventory lists: both ends join rail 2.
	f.cells = append(f.cells, Cell{Src: "node-01", Dst: "node-02", Rail: 2, Class: probe.ClassOK,
		Latency: &probe.Latency{P50Ns: 1000}})
	m := f.build()
	if m.Rails != 3 {
		t.Fatalf("rails = %d, want 3", m.Rails)
	}
	perRail := map[int]int{}
	for _, c := range m.Cells {
		perRail[c.Rail]++
	}
	// rail 0: 4 nodes; rail 1: node-04 lacks it; rail 2: node-01, node-02, and
	// the reverse direction is untested.
	if perRail[0] != 12 || perRail[1] != 6 || perRail[2] != 2 {
		t.Fatalf("cells per rail %v", perRail)
	}
	if m.Counts[VerdictUntested] != 1 || m.Healthy {
		t.Fatalf("counts %v healthy %v", m.Counts, m.Healthy)
	}
}

func TestBuildDuplicatesKeepLast(t *testing.T) {
	f := newFixture(3, 1)
	retest := *f.cell("node-01", "node-02", 0)
	fail(probe.ClassTimeout, "first attempt timed out", "")(f.cell("node-01", "node-02", 0))
	f.cells = append(f.cells, retest) // the retest passed
	m := f.build()
	if !m.Healthy || len(m.Cells) != 6 {
		t.Fatalf("healthy=%v cells=%d counts=%v", m.Healthy, len(m.Cells), m.Counts)
	}
	// And the other way round: a later failure overrides an earlier pass.
	f.cells = append(f.cells, f.cells[0])
	fail(probe.ClassTimeout, "second attempt timed out", "")(&f.cells[len(f.cells)-1])
	m = f.build()
	if m.Counts[VerdictFailed] != 1 || m.Cells[0].Reason != "second attempt timed out" {
		t.Fatalf("counts=%v cell0=%+v", m.Counts, m.Cells[0])
	}
}

func TestBuildIgnoresUnplaceableCells(t *testing.T) {
	f := newFixture(3, 1)
	ok := f.cells[0]
	for _, mut := range []func(c *Cell){
		func(c *Cell) { c.Src = "stranger" },
		func(c *Cell) { c.Dst = c.Src },
		func(c *Cell) { c.Rail = -1 },
		func(c *Cell) { c.Rail = maxRails },
	} {
		c := ok
		mut(&c)
		f.cells = append(f.cells, c)
	}
	m := f.build()
	if m.Ignored != 4 || m.Rails != 1 || len(m.Cells) != 6 || !m.Healthy {
		t.Fatalf("ignored=%d rails=%d cells=%d healthy=%v", m.Ignored, m.Rails, len(m.Cells), m.Healthy)
	}
}

func TestUntestedCells(t *testing.T) {
	f := newFixture(4, 1)
	f.drop(func(c *Cell) bool { return c.Src == "node-01" && c.Dst == "node-02" })
	m := f.build()
	if m.Healthy || m.Counts[VerdictUntested] != 1 || m.Counts[VerdictOK] != 11 {
		t.Fatalf("healthy=%v counts=%v", m.Healthy, m.Counts)
	}
	c := m.Cells[0]
	if c.Src != "node-01" || c.Dst != "node-02" || c.Verdict != VerdictUntested ||
		c.SrcDevice != "mlx5_0" || c.DstDevice != "mlx5_0" {
		t.Fatalf("untested cell %+v", c)
	}
	// A missing result says nothing about hardware: nobody is blamed.
	if len(m.Suspects) != 0 {
		t.Fatalf("suspects %+v", m.Suspects)
	}
	// No result at all yet: unhealthy, but no suspects either.
	m = Build(f.nodes, nil, DefaultThresholds())
	if m.Healthy || m.Counts[VerdictUntested] != 12 || len(m.Suspects) != 0 {
		t.Fatalf("empty sweep: healthy=%v counts=%v suspects=%d", m.Healthy, m.Counts, len(m.Suspects))
	}
}

func TestFailedCellReason(t *testing.T) {
	f := newFixture(3, 1)
	fail(probe.ClassInvalidGID, "GID index 3 is RoCE v1", "use GID index 1")(f.cell("node-02", "node-03", 0))
	c := f.cell("node-03", "node-01", 0)
	c.Class, c.Error, c.Latency, c.Bandwidth = probe.ClassResource, nil, nil, nil
	m := f.build()
	got := map[string]Result{}
	for _, r := range m.Cells {
		got[r.Src+">"+r.Dst] = r
	}
	if r := got["node-02>node-03"]; r.Verdict != VerdictFailed || r.Reason != "GID index 3 is RoCE v1" {
		t.Errorf("invalid-gid cell %+v", r)
	}
	if r := got["node-03>node-01"]; r.Verdict != VerdictFailed || !strings.Contains(r.Reason, "resource") {
		t.Errorf("bare class cell %+v", r)
	}
}

// A producer that left Class empty still gets a sensible verdict.
func TestBuildEmptyClass(t *testing.T) {
	f := newFixture(3, 1)
	f.cell("node-01", "node-02", 0).Class = ""
	e := f.cell("node-01", "node-03", 0)
	e.Class, e.Latency, e.Bandwidth = "", nil, nil
	e.Error = &probe.Error{Class: probe.ClassMTUMismatch, Cause: "4096 vs 1024"}
	m := f.build()
	if m.Cells[0].Verdict != VerdictOK || m.Cells[1].Verdict != VerdictFailed || m.Cells[1].Class != probe.ClassMTUMismatch {
		t.Fatalf("cells %+v / %+v", m.Cells[0], m.Cells[1])
	}
}

// Build must not touch its inputs: the coordinator hands it FSM state.
func TestBuildDoesNotModifyInput(t *testing.T) {
	f := newFixture(4, 1)
	f.nodes[0], f.nodes[3] = f.nodes[3], f.nodes[0]
	f.cell("node-01", "node-02", 0).SrcDevice = ""
	before := f.nodes[0].Name
	f.build()
	if f.nodes[0].Name != before || f.cell("node-01", "node-02", 0).SrcDevice != "" {
		t.Fatal("Build modified its input")
	}
}

// The map index (a sweep that has barely started) and the flat one (a
// finished sweep) must give byte-identical matrices.
func TestBuildSparseIndexMatchesDense(t *testing.T) {
	f := newFixture(9, 3)
	f.touching("node-04", 1, fail(probe.ClassPortDown, "down", ""))
	f.touching("node-07", AllRails, slow(3))
	f.drop(func(c *Cell) bool { return c.Src == "node-02" && c.Rail == 2 })
	f.cells = append(f.cells, f.cells[5]) // a duplicate
	dense := f.build()
	saved := denseOK
	denseOK = func(uint64, uint64) bool { return false }
	defer func() { denseOK = saved }()
	sparse := f.build()
	ns, _ := sortedNodes(f.nodes)
	if idx := indexCells(ns, f.cells); idx.sparse == nil {
		t.Fatal("the map index was not used")
	}
	if !reflect.DeepEqual(dense, sparse) {
		t.Fatalf("dense and sparse differ:\n%s\n%s", dense.Summary(), sparse.Summary())
	}
}
