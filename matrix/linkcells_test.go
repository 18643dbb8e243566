package matrix

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/topology"
)

// linkFabric is a fixture on a fat tree. With flows, every cell carries
// its flow and back flow, and the cells whose writes cross the link fault
// (leaf-r0-00:3 → spine-r0-00:1 in the 2-tier tree of the tests: 4 leaves
// and 2 spines a rail, 2 nodes a leaf, one uplink to each spine) fail,
// but for one whose first attempt timed out there and whose retest
// measured fine (retested).
type linkFabric struct {
	topo     *topology.Topology
	f        *fixture
	uplink   topology.Link
	retested [2]string // src, dst on rail 0
}

func newLinkFabric(t *testing.T, tree string, flows bool, fault [2]string) *linkFabric {
	t.Helper()
	ft, topo := fixtureTree(t, tree)
	up, err := topo.TargetLinks("", fault[0], fault[1], true)
	if err != nil {
		t.Fatal(err)
	}
	lf := &linkFabric{topo: topo, f: newFixture(ft.Nodes, ft.Rails), uplink: topology.Link(up[0])}
	if !flows {
		return lf
	}
	for i := range lf.f.cells {
		c := &lf.f.cells[i]
		s, d := nodeIndexOf(c.Src), nodeIndexOf(c.Dst)
		c.Flow, c.BackFlow = flowOf(s, d, c.Rail), flowOf(d, s, c.Rail)^0x155
		hs, _ := topo.HCA(c.Src, c.Rail)
		hd, _ := topo.HCA(c.Dst, c.Rail)
		p, _ := topo.Route(nil, hs, hd, uint32(c.Flow))
		if !slices.Contains(p, lf.uplink) {
			continue
		}
		if lf.retested[0] == "" {
			lf.retested = [2]string{c.Src, c.Dst}
			c.Retests = []Attempt{{Round: 2, Class: probe.ClassOK, Latency: c.Latency, Bandwidth: c.Bandwidth}}
			c.Class, c.Error, c.Latency, c.Bandwidth = probe.ClassTimeout, &probe.Error{Class: probe.ClassTimeout, Cause: "no answer"}, nil, nil
			continue
		}
		c.Class, c.Error = probe.ClassRetryExceeded, &probe.Error{Class: probe.ClassRetryExceeded, Cause: "transport retry counter exceeded"}
		c.Latency, c.Bandwidth = nil, nil
	}
	return lf
}

// nodeIndexOf inverts nodeName.
func nodeIndexOf(name string) int {
	i, err := strconv.Atoi(strings.TrimPrefix(name, "node-"))
	if err != nil {
		panic("not a fixture node: " + name)
	}
	return i - 1
}

func (lf *linkFabric) cable(t *testing.T, from, to string) int {
	t.Helper()
	ls, err := lf.topo.TargetLinks("", from, to, true)
	if err != nil {
		t.Fatal(err)
	}
	return topology.Link(ls[0]).Cable()
}

// routedCells is LinkCells the slow way: every tested cell routed over the
// topology both ways by its flows, sorted as LinkCells sorts.
func routedCells(m *Matrix, topo *topology.Topology, c int, path func(r Result) Verdict) (crossed int, cells []string) {
	type hit struct {
		k    int
		line string
		rank int
	}
	var hits []hit
	dir := func(p []topology.Link) string {
		for _, l := range p {
			if l.Cable() == c {
				return map[bool]string{true: "ab", false: "ba"}[l.Forward()]
			}
		}
		return ""
	}
	_ = m.EachCell(func(k int, r *Result) error {
		if r.Verdict == VerdictUntested {
			return nil
		}
		hs, ok1 := topo.HCA(r.Src, r.Rail)
		hd, ok2 := topo.HCA(r.Dst, r.Rail)
		if !ok1 || !ok2 {
			return nil
		}
		there, _ := topo.Route(nil, hs, hd, uint32(r.Flow))
		back, _ := topo.Route(nil, hd, hs, uint32(r.BackFlow))
		data, ret := dir(there), dir(back)
		if data == "" && ret == "" {
			return nil
		}
		v := path(*r)
		hits = append(hits, hit{k, cellLine(r.Src, r.Dst, r.Rail, r.Verdict, v, data, ret), slices.Index(linkOrder[:], v)})
		return nil
	})
	slices.SortFunc(hits, func(a, b hit) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		return a.k - b.k
	})
	for _, h := range hits {
		cells = append(cells, h.line)
	}
	return len(hits), cells
}

func cellLine(src, dst string, rail int, v, path Verdict, data, ret string) string {
	return fmt.Sprintf("%s>%s/%d %s/%s data=%s return=%s", src, dst, rail, v, path, data, ret)
}

func TestLinkCells(t *testing.T) {
	const tree = "nodes=8,rails=2,leaf=2,spines=2"
	// 2 pods of 4 leaves, 2 spines each; spine j of each pod cabled to
	// core j (port 5 of the spine, port 1 + pod of the core).
	const tree3 = "nodes=16,rails=1,leaf=2,spines=2,pods=2,cores=2"
	type want struct {
		crossed, unknown int
		counts           map[Verdict]int
		cells            []string // nil: the routed cells
	}
	cases := []struct {
		name        string
		tree        string
		fault       [2]string // "": the 2-tier tree's uplink
		flows       bool
		materialise bool
		dropRail1   bool
		from, to    string
		limit       int
		want        want
	}{
		{name: "a lossy uplink, both directions, retest included", tree: tree, flows: true,
			from: "leaf-r0-00:3", to: "spine-r0-00:1", limit: 200, want: want{crossed: -1}},
		{name: "the same read from a materialised matrix", tree: tree, flows: true, materialise: true,
			from: "leaf-r0-00:3", to: "spine-r0-00:1", limit: 200, want: want{crossed: -1}},
		{name: "the limit keeps the worst", tree: tree, flows: true,
			from: "leaf-r0-00:3", to: "spine-r0-00:1", limit: 3, want: want{crossed: -1}},
		{name: "a spine's other uplink: no fault on it", tree: tree, flows: true,
			from: "leaf-r0-02:4", to: "spine-r0-01:3", limit: 200, want: want{crossed: -1}},
		{name: "a host cable: its HCA's row and column, whatever the flows", tree: tree,
			from: "node-01/mlx5_0", to: "leaf-r0-00:1", limit: 200, want: want{crossed: 14, counts: map[Verdict]int{VerdictOK: 14},
				cells: []string{
					cellLine("node-01", "node-02", 0, VerdictOK, VerdictOK, "ab", "ba"),
					cellLine("node-01", "node-03", 0, VerdictOK, VerdictOK, "ab", "ba"),
				}}},
		{name: "RoCE without flows: cells with two equal paths are unknown, not guessed", tree: tree,
			from: "leaf-r0-00:3", to: "spine-r0-00:1", limit: 200,
			// 2 nodes below leaf-r0-00 x 6 elsewhere, both directions.
			want: want{crossed: 0, unknown: 24, counts: map[Verdict]int{}, cells: []string{}}},
		{name: "InfiniBand without flows routes by destination", tree: tree + ",ll=ib",
			from: "leaf-r0-00:3", to: "spine-r0-00:1", limit: 200, want: want{crossed: -1}},
		{name: "a link with no cells: rail 1 untested", tree: tree, flows: true, dropRail1: true,
			from: "leaf-r1-00:3", to: "spine-r1-00:1", limit: 200, want: want{crossed: 0, counts: map[Verdict]int{}, cells: []string{}}},
		{name: "a core link of a 3-tier tree, its spine's uplink lossy", tree: tree3, flows: true,
			fault: [2]string{"spine-r0-p0-00:5", "core-r0-00:1"}, from: "spine-r0-p0-00:5", to: "core-r0-00:1", limit: 200, want: want{crossed: -1}},
		{name: "a leaf uplink of a 3-tier tree", tree: tree3, flows: true,
			fault: [2]string{"spine-r0-p0-00:5", "core-r0-00:1"}, from: "leaf-r0-p1-02:3", to: "spine-r0-p1-00:3", limit: 200, want: want{crossed: -1}},
		{name: "limit 0 counts and lists none", tree: tree, flows: true,
			from: "leaf-r0-01:3", to: "spine-r0-00:2", limit: 0, want: want{crossed: -1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fault := tc.fault
			if fault[0] == "" {
				fault = [2]string{"leaf-r0-00:3", "spine-r0-00:1"}
			}
			lf := newLinkFabric(t, tc.tree, tc.flows, fault)
			if tc.dropRail1 {
				lf.f.drop(func(c *Cell) bool { return c.Rail == 1 })
			}
			m := AnalyseOn(lf.topo, lf.f.nodes, nil, lf.f.cells, DefaultThresholds())
			if tc.materialise {
				m = m.Materialize()
			}
			c := lf.cable(t, tc.from, tc.to)
			got, err := m.LinkCells(context.Background(), lf.topo, c, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, x := range got.Cells {
				lines = append(lines, cellLine(x.Src, x.Dst, x.Rail, x.Verdict, x.PathVerdict, x.Data, x.Return))
			}
			w := tc.want
			if w.crossed < 0 {
				retested := func(r Result) Verdict {
					if !tc.materialise && r.Src == lf.retested[0] && r.Dst == lf.retested[1] && r.Rail == 0 {
						return VerdictFailed // its first attempt, over the uplink
					}
					return r.Verdict
				}
				var all []string
				w.crossed, all = routedCells(m, lf.topo, c, retested)
				if w.crossed == 0 {
					t.Fatal("no cell routes over the cable: the case compares nothing")
				}
				w.cells = all[:min(len(all), tc.limit)]
				w.counts = map[Verdict]int{}
				for _, l := range all {
					w.counts[Verdict(strings.Split(strings.Fields(l)[1], "/")[1])]++
				}
			}
			if got.Crossed != w.crossed || got.Unknown != w.unknown || fmt.Sprint(got.Counts) != fmt.Sprint(w.counts) {
				t.Errorf("crossed %d, unknown %d, counts %v; want %d, %d, %v", got.Crossed, got.Unknown, got.Counts, w.crossed, w.unknown, w.counts)
			}
			if n := min(len(w.cells), len(lines)); !slices.Equal(lines[:n], w.cells[:n]) || (tc.want.cells == nil && len(lines) != len(w.cells)) {
				t.Errorf("cells:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(w.cells, "\n"))
			}
			if got.Cells == nil || len(got.Cells) != min(tc.limit, got.Crossed) {
				t.Errorf("%d cells listed (nil: %v) of %d crossed, limit %d", len(got.Cells), got.Cells == nil, got.Crossed, tc.limit)
			}
		})
	}
}

// TestLinkCellsRefuses: a cable the topology lacks, no topology, or a
// caller gone.
func TestLinkCellsRefuses(t *testing.T) {
	lf := newLinkFabric(t, "nodes=8,rails=2,leaf=2,spines=2", true, [2]string{"leaf-r0-00:3", "spine-r0-00:1"})
	m := AnalyseOn(lf.topo, lf.f.nodes, nil, lf.f.cells, DefaultThresholds())
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	uplink := lf.cable(t, "leaf-r0-00:3", "spine-r0-00:1")
	for _, tc := range []struct {
		name string
		ctx  context.Context
		topo *topology.Topology
		c    int
		want string
	}{
		{"past the last cable", context.Background(), lf.topo, len(lf.topo.Cables), fmt.Sprintf("cables 0..%d", len(lf.topo.Cables)-1)},
		{"negative", context.Background(), lf.topo, -1, "cable -1"},
		{"no topology", context.Background(), nil, 0, "no topology"},
		{"the caller went away", gone, lf.topo, uplink, context.Canceled.Error()},
	} {
		if _, err := m.LinkCells(tc.ctx, tc.topo, tc.c, 10); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v; want one saying %q", tc.name, err, tc.want)
		}
	}
}

// BenchmarkLinkCellsHuge times LinkCells on the compact sweep of
// BenchmarkLinksHuge (BENCH_NODES, default 1,024, x 8 on a 3-tier fat
// tree): a host cable, the lossy leaf uplink and a core link, each the
// cells of one cable out of every cell of the sweep. A benchmark only:
// BENCH_NODES=4096 go test -run X -bench LinkCellsHuge -benchtime 1x ./matrix/
func BenchmarkLinkCellsHuge(b *testing.B) {
	n := 1024
	if v, err := strconv.Atoi(os.Getenv("BENCH_NODES")); err == nil && v > 1 {
		n = v
	}
	const rails = 8
	pods := max(n/512, 2)
	src, err := newLinkSource(n, rails, fmt.Sprintf("nodes=%d,rails=%d,leaf=32,spines=16,pods=%d,cores=16", n, rails, pods))
	if err != nil {
		b.Fatal(err)
	}
	m := AnalyseOn(src.topo, src.nodes, src, nil, DefaultThresholds())
	topo := src.topo
	h, _ := topo.HCA(src.nodes[100].Name, src.faultRail)
	core := -1
	for c, cb := range topo.Cables {
		if !cb.A.IsHCA() && !cb.B.IsHCA() && topo.Switches[cb.B.Switch].Tier == topology.Core && topo.Switches[cb.B.Switch].Plane == src.faultRail {
			core = c
			break
		}
	}
	for _, c := range []struct {
		name  string
		cable int
	}{{"host", topo.HCACable(h)}, {"leaf-uplink", src.uplink.Cable()}, {"core", core}} {
		b.Run(c.name, func(b *testing.B) {
			var got LinkCells
			for b.Loop() {
				if got, err = m.LinkCells(context.Background(), topo, c.cable, 200); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(got.Crossed), "crossed")
			b.ReportMetric(float64(got.Counts[VerdictLowBandwidth]), "low-bw")
		})
	}
}
