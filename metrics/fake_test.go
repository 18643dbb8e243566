package metrics

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// fakeCoordinator is a CoordinatorSource with fixed answers; it counts
// Matrix calls so the cache can be tested.
type fakeCoordinator struct {
	mu       sync.Mutex
	nodes    []api.NodeInfo
	sweeps   []api.SweepInfo
	matrices map[string]*matrix.Matrix
	state    string
	changes  uint64
	builds   int
}

func (f *fakeCoordinator) Nodes() []api.NodeInfo { return f.nodes }

func (f *fakeCoordinator) Sweeps() []api.SweepInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]api.SweepInfo(nil), f.sweeps...)
}

func (f *fakeCoordinator) Matrix(id string) (*matrix.Matrix, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.builds++
	m, ok := f.matrices[id]
	return m, ok
}

func (f *fakeCoordinator) RaftState() string     { return f.state }
func (f *fakeCoordinator) LeaderChanges() uint64 { return f.changes }

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fabric is n nodes (n1..nN) with rails HCAs each, every cell measured at
// 1 µs and 390 Gb/s unless a fault below says otherwise.
type fabric struct {
	nodes []matrix.Node
	cells []matrix.Cell
}

func newFabric(n, rails int) *fabric {
	f := &fabric{}
	for i := 1; i <= n; i++ {
		node := matrix.Node{Name: fmt.Sprintf("n%d", i), State: "alive"}
		for r := 0; r < rails; r++ {
			node.Ports = append(node.Ports, probe.Port{Device: fmt.Sprintf("mlx5_%d", r), Port: 1, Rail: r,
				State: "ACTIVE", Usable: true, RateGbps: 400})
		}
		f.nodes = append(f.nodes, node)
	}
	for r := 0; r < rails; r++ {
		for _, s := range f.nodes {
			for _, d := range f.nodes {
				if s.Name == d.Name {
					continue
				}
				f.cells = append(f.cells, matrix.Cell{Src: s.Name, Dst: d.Name, Rail: r,
					SrcDevice: s.Ports[r].Device, DstDevice: d.Ports[r].Device, Class: probe.ClassOK,
					Latency:   &probe.Latency{Samples: 1000, MinNs: 900, P50Ns: 1000, P99Ns: 1500},
					Bandwidth: &probe.Bandwidth{Gbps: 390}})
			}
		}
	}
	return f
}

func (f *fabric) cell(src, dst string, rail int) *matrix.Cell {
	for i := range f.cells {
		if c := &f.cells[i]; c.Src == src && c.Dst == dst && c.Rail == rail {
			return c
		}
	}
	panic("no cell " + src + "->" + dst)
}

// portDown fails every cell of one HCA the way the verbs engine would.
func (f *fabric) portDown(node string, rail int) {
	for i := range f.cells {
		c := &f.cells[i]
		if c.Rail == rail && (c.Src == node || c.Dst == node) {
			c.Class, c.Latency, c.Bandwidth = probe.ClassPortDown, nil, nil
			c.Error = &probe.Error{Class: probe.ClassPortDown, Cause: "port DOWN"}
		}
	}
}

// build analyses compactly, as the coordinator serves a sweep; the copy
// keeps later changes to the fixture out of it.
func (f *fabric) build() *matrix.Matrix {
	return matrix.Analyse(f.nodes, nil, append([]matrix.Cell(nil), f.cells...), matrix.DefaultThresholds())
}

// standardFabric: 4 nodes x 2 rails; n3's rail 1 is down (6 failed cells),
// n1->n2 on rail 0 is slow, n2->n4 on rail 0 is narrow.
func standardFabric() *fabric {
	f := newFabric(4, 2)
	f.portDown("n3", 1)
	f.cell("n1", "n2", 0).Latency = &probe.Latency{Samples: 1000, MinNs: 4000, P50Ns: 5000, P99Ns: 9000}
	f.cell("n2", "n4", 0).Bandwidth = &probe.Bandwidth{Gbps: 100}
	return f
}

func standardSource() *fakeCoordinator {
	f := standardFabric()
	inv := func(name string, usable ...bool) *probe.Inventory {
		in := &probe.Inventory{Node: name, Generation: 1}
		for r, u := range usable {
			in.Ports = append(in.Ports, probe.Port{Device: fmt.Sprintf("mlx5_%d", r), Port: 1, Rail: r, Usable: u})
		}
		return in
	}
	n1 := inv("n1", true, true)
	n1.Checks = []probe.Check{{Name: "memlock", Status: "fail"}, {Name: "devices", Status: "ok"}}
	return &fakeCoordinator{
		nodes: []api.NodeInfo{
			{Name: "c1", Role: "coordinator", State: "alive"},
			{Name: "n1", Role: "worker", State: "alive", Inventory: n1},
			{Name: "n2", Role: "worker", State: "alive", Inventory: inv("n2", true, true)},
			{Name: "n3", Role: "worker", State: "alive", Inventory: inv("n3", true, false)},
			{Name: "n4", Role: "worker", State: "alive", Inventory: inv("n4", true, true)},
			{Name: "n5", Role: "worker", State: "dead"},
		},
		sweeps: []api.SweepInfo{
			{ID: "s2", State: api.SweepRunning, Mode: "full", Nodes: []string{"n1", "n2", "n3", "n4"}, Rails: 2,
				Rounds: 3, RoundsDone: 1, Cells: 24, CellsDone: 8, Started: t0.Add(-30 * time.Second)},
			{ID: "s1", State: api.SweepDone, Mode: "full", Nodes: []string{"n1", "n2", "n3", "n4"}, Rails: 2,
				Rounds: 3, RoundsDone: 3, Cells: 24, CellsDone: 24, Started: t0.Add(-10 * time.Minute),
				Finished: t0.Add(-10*time.Minute + 45*time.Second)},
		},
		matrices: map[string]*matrix.Matrix{"s1": f.build()},
		state:    "Leader",
		changes:  3,
	}
}

func newCoordinatorRegistry(t *testing.T, src CoordinatorSource, o CoordinatorOptions) *prometheus.Registry {
	t.Helper()
	if o.Now == nil {
		o.Now = func() time.Time { return t0 }
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(NewCoordinator(src, o)); err != nil {
		t.Fatal(err)
	}
	return reg
}

// families gathers reg, failing the test on any collection error (duplicate
// series, label mismatch, inconsistent descriptors).
func families(t *testing.T, g prometheus.Gatherer) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// value finds the one sample of name whose labels include want ("k=v" pairs).
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, want ...string) float64 {
	t.Helper()
	mf, ok := fams[name]
	if !ok {
		t.Fatalf("%s: not exported", name)
	}
	var found []*dto.Metric
	for _, m := range mf.GetMetric() {
		if hasLabels(m, want) {
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s{%s}: %d matching series, want 1", name, strings.Join(want, ","), len(found))
	}
	m := found[0]
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	t.Fatalf("%s: unexpected metric type", name)
	return 0
}

func hasLabels(m *dto.Metric, want []string) bool {
	have := map[string]string{}
	for _, lp := range m.GetLabel() {
		have[lp.GetName()] = lp.GetValue()
	}
	for _, kv := range want {
		k, v, _ := strings.Cut(kv, "=")
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func series(fams map[string]*dto.MetricFamily, name string) int {
	if mf, ok := fams[name]; ok {
		return len(mf.GetMetric())
	}
	return 0
}

func latencyNs(p50 float64) *probe.Latency {
	return &probe.Latency{Samples: 1000, MinNs: p50 * 0.9, P50Ns: p50, P99Ns: p50 * 1.5}
}

func gbps(g float64) *probe.Bandwidth { return &probe.Bandwidth{Gbps: g} }

// finishS2 ends standardSource's running sweep s2, healthy, as its last
// round commits.
func finishS2(src *fakeCoordinator) {
	src.mu.Lock()
	defer src.mu.Unlock()
	src.sweeps[0].State, src.sweeps[0].Finished, src.sweeps[0].CellsDone = api.SweepDone, t0, 24
	src.matrices["s2"] = newFabric(4, 2).build()
}
