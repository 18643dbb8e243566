package metrics

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestCoordinatorLiveMetrics(t *testing.T) {
	fams := families(t, newCoordinatorRegistry(t, standardSource(), CoordinatorOptions{}))
	checks := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"rdmamesh_members", []string{"role=worker", "state=alive"}, 4},
		{"rdmamesh_members", []string{"role=worker", "state=dead"}, 1},
		{"rdmamesh_members", []string{"role=coordinator", "state=alive"}, 1},
		{"rdmamesh_members", []string{"role=coordinator", "state=left"}, 0},
		{"rdmamesh_node_alive", []string{"node=n5", "role=worker"}, 0},
		{"rdmamesh_node_alive", []string{"node=c1", "role=coordinator"}, 1},
		{"rdmamesh_node_failed_checks", []string{"node=n1"}, 1},
		{"rdmamesh_node_failed_checks", []string{"node=n2"}, 0},
		{"rdmamesh_hca_port_usable", []string{"node=n3", "device=mlx5_1", "rail=1"}, 0},
		{"rdmamesh_hca_port_usable", []string{"node=n3", "device=mlx5_0", "rail=0"}, 1},
		{"rdmamesh_raft_state", []string{"state=leader"}, 1},
		{"rdmamesh_raft_state", []string{"state=follower"}, 0},
		{"rdmamesh_raft_leader_changes_total", nil, 3},
		{"rdmamesh_sweeps", []string{"state=running"}, 1},
		{"rdmamesh_sweeps", []string{"state=done"}, 1},
		{"rdmamesh_sweeps", []string{"state=failed"}, 0},
		{"rdmamesh_sweep_info", []string{"sweep_id=s2", "mode=full", "state=running"}, 1},
		{"rdmamesh_sweep_running", nil, 1},
		{"rdmamesh_sweep_nodes", nil, 4},
		{"rdmamesh_sweep_rounds", nil, 3},
		{"rdmamesh_sweep_rounds_done", nil, 1},
		{"rdmamesh_sweep_cells", nil, 24},
		{"rdmamesh_sweep_cells_done", nil, 8},
		{"rdmamesh_sweep_start_timestamp_seconds", nil, float64(t0.Add(-30 * time.Second).Unix())},
		// Running: the duration so far, by the injected clock.
		{"rdmamesh_sweep_duration_seconds", nil, 30},
	}
	for _, c := range checks {
		if got := value(t, fams, c.name, c.labels...); !near(got, c.want) {
			t.Errorf("%s{%s} = %g, want %g", c.name, strings.Join(c.labels, ","), got, c.want)
		}
	}
	if n := series(fams, "rdmamesh_members"); n != 8 {
		t.Errorf("rdmamesh_members has %d series, want the 8 known role x state pairs", n)
	}
}

func TestCoordinatorResultMetrics(t *testing.T) {
	fams := families(t, newCoordinatorRegistry(t, standardSource(), CoordinatorOptions{WorstPairs: 2}))
	checks := []struct {
		name   string
		labels []string
		want   float64
	}{
		// The running sweep s2 is not judged; s1, the newest done one, is.
		{"rdmamesh_result_info", []string{"sweep_id=s1", "mode=full"}, 1},
		{"rdmamesh_result_duration_seconds", nil, 45},
		{"rdmamesh_result_end_timestamp_seconds", nil, float64(t0.Add(-10*time.Minute + 45*time.Second).Unix())},
		{"rdmamesh_fabric_healthy", nil, 0},
		{"rdmamesh_cells", []string{"verdict=failed"}, 6},
		{"rdmamesh_cells", []string{"verdict=slow-latency"}, 1},
		{"rdmamesh_cells", []string{"verdict=low-bandwidth"}, 1},
		{"rdmamesh_cells", []string{"verdict=ok"}, 24 - 8},
		{"rdmamesh_cells", []string{"verdict=untested"}, 0},
		{"rdmamesh_failed_cells", []string{"class=port-down"}, 6},
		{"rdmamesh_failed_cells", []string{"class=no-netdev"}, 0},
		{"rdmamesh_hca_cells", []string{"node=n3", "device=mlx5_1", "rail=1"}, 6},
		{"rdmamesh_hca_bad_cells", []string{"node=n3", "device=mlx5_1", "rail=1"}, 6},
		{"rdmamesh_hca_bad_cells", []string{"node=n3", "device=mlx5_0", "rail=0"}, 0},
		{"rdmamesh_hca_bad_cells", []string{"node=n2", "device=mlx5_0", "rail=0"}, 2},
		{"rdmamesh_node_cells", []string{"node=n1"}, 12},
		{"rdmamesh_node_bad_cells", []string{"node=n3"}, 6},
		{"rdmamesh_node_healthy", []string{"node=n3"}, 0},
		{"rdmamesh_rail_cells", []string{"rail=0"}, 12},
		{"rdmamesh_rail_bad_cells", []string{"rail=0"}, 2},
		{"rdmamesh_rail_bad_cells", []string{"rail=1"}, 6},
		{"rdmamesh_rail_latency_p50_seconds", []string{"rail=1"}, 1e-6},
		{"rdmamesh_rail_bandwidth_min_bytes_per_second", []string{"rail=0"}, 100e9 / 8},
		{"rdmamesh_node_bandwidth_min_bytes_per_second", []string{"node=n4"}, 100e9 / 8},
		{"rdmamesh_pair_latency_p50_seconds", []string{"src=n1", "dst=n2", "rail=0"}, 5e-6},
		{"rdmamesh_pair_latency_p99_seconds", []string{"src=n1", "dst=n2", "rail=0"}, 9e-6},
		{"rdmamesh_pair_bandwidth_bytes_per_second", []string{"src=n2", "dst=n4", "rail=0"}, 100e9 / 8},
		{"rdmamesh_suspect_bad_cells", []string{"kind=hca", "node=n3", "device=mlx5_1", "rail=1"}, 6},
	}
	for _, c := range checks {
		if got := value(t, fams, c.name, c.labels...); !near(got, c.want) {
			t.Errorf("%s{%s} = %g, want %g", c.name, strings.Join(c.labels, ","), got, c.want)
		}
	}
	for _, name := range []string{"rdmamesh_pair_latency_p50_seconds", "rdmamesh_pair_bandwidth_bytes_per_second"} {
		if n := series(fams, name); n != 2 {
			t.Errorf("%s: %d series, want WorstPairs = 2", name, n)
		}
	}
}

func TestCoordinatorHealthyFabric(t *testing.T) {
	src := standardSource()
	src.matrices["s1"] = newFabric(3, 1).build()
	fams := families(t, newCoordinatorRegistry(t, src, CoordinatorOptions{}))
	if v := value(t, fams, "rdmamesh_fabric_healthy"); v != 1 {
		t.Errorf("fabric_healthy = %g on a clean fabric", v)
	}
	if v := value(t, fams, "rdmamesh_node_healthy", "node=n2"); v != 1 {
		t.Errorf("node_healthy{n2} = %g on a clean fabric", v)
	}
	if v := value(t, fams, "rdmamesh_suspects", "kind=hca"); v != 0 {
		t.Errorf("suspects{hca} = %g on a clean fabric", v)
	}
	if n := series(fams, "rdmamesh_suspect_bad_cells"); n != 0 {
		t.Errorf("%d suspect series on a clean fabric", n)
	}
}

// The matrix is rebuilt only when the result sweep changes.
func TestCoordinatorResultCache(t *testing.T) {
	src := standardSource()
	reg := newCoordinatorRegistry(t, src, CoordinatorOptions{})
	families(t, reg)
	families(t, reg)
	if src.builds != 1 {
		t.Fatalf("two scrapes built the matrix %d times, want 1", src.builds)
	}
	finishS2(src)
	fams := families(t, reg)
	if src.builds != 2 {
		t.Fatalf("a newly finished sweep built the matrix %d times in total, want 2", src.builds)
	}
	if v := value(t, fams, "rdmamesh_result_info", "sweep_id=s2"); v != 1 {
		t.Fatalf("result_info{s2} = %g", v)
	}
	if v := value(t, fams, "rdmamesh_sweep_duration_seconds"); !near(v, 30) {
		t.Errorf("finished sweep duration = %g, want 30 (Finished - Started)", v)
	}
}

func TestCoordinatorNoSweeps(t *testing.T) {
	src := &fakeCoordinator{state: "Follower"}
	fams := families(t, newCoordinatorRegistry(t, src, CoordinatorOptions{}))
	for _, name := range []string{"rdmamesh_sweep_info", "rdmamesh_result_info", "rdmamesh_cells"} {
		if _, ok := fams[name]; ok {
			t.Errorf("%s exported with no sweep", name)
		}
	}
	if v := value(t, fams, "rdmamesh_raft_state", "state=follower"); v != 1 {
		t.Errorf("raft_state{follower} = %g", v)
	}
}

// Cardinality stays O(nodes x rails + K) however many cells the fabric has.
func TestCoordinatorCardinalityBounded(t *testing.T) {
	const nodes, rails, k, top = 40, 4, 5, 3
	f := newFabric(nodes, rails)
	for i := 1; i <= 6; i++ {
		f.portDown(fmt.Sprintf("n%d", i), i%rails)
	}
	for i := range f.cells {
		// Spread latencies and bandwidths so every cell is a distinct candidate.
		f.cells[i].Latency = nil
		f.cells[i].Bandwidth = nil
		if f.cells[i].Class == "ok" {
			c := &f.cells[i]
			c.Latency = latencyNs(1000 + float64(i%97))
			c.Bandwidth = gbps(380 + float64(i%11))
		}
	}
	src := standardSource()
	src.matrices["s1"] = f.build()
	fams := families(t, newCoordinatorRegistry(t, src, CoordinatorOptions{WorstPairs: k, TopSuspects: top}))
	limits := map[string]int{
		"rdmamesh_pair_latency_p50_seconds":        k,
		"rdmamesh_pair_latency_p99_seconds":        k,
		"rdmamesh_pair_bandwidth_bytes_per_second": k,
		"rdmamesh_suspect_bad_cells":               top,
		"rdmamesh_node_cells":                      nodes,
		"rdmamesh_node_healthy":                    nodes,
		"rdmamesh_hca_cells":                       nodes * rails,
		"rdmamesh_hca_bad_cells":                   nodes * rails,
		"rdmamesh_rail_cells":                      rails,
	}
	total := 0
	for _, mf := range fams {
		total += len(mf.GetMetric())
	}
	for name, max := range limits {
		if n := series(fams, name); n == 0 || n > max {
			t.Errorf("%s: %d series, want 1..%d", name, n, max)
		}
	}
	// 40x40x4 = 6,240 cells; the whole page must stay far below that.
	if total > 3*nodes*rails+8*nodes+100 {
		t.Errorf("%d series for %d cells: not bounded by nodes x rails", total, len(f.cells))
	}
	noHCA := families(t, newCoordinatorRegistry(t, src, CoordinatorOptions{NoHCA: true, WorstPairs: -1}))
	for _, name := range []string{"rdmamesh_hca_cells", "rdmamesh_hca_bad_cells", "rdmamesh_hca_port_usable",
		"rdmamesh_pair_latency_p50_seconds"} {
		if n := series(noHCA, name); n != 0 {
			t.Errorf("NoHCA/WorstPairs<0: %s still has %d series", name, n)
		}
	}
}

// Scrape over HTTP, as Prometheus does, and compare the exposition text.
func TestHandlerScrape(t *testing.T) {
	reg := NewRegistry()
	reg.MustRegister(NewCoordinator(standardSource(), CoordinatorOptions{Now: func() time.Time { return t0 }}))
	reg.MustRegister(BuildInfo("coordinator", "v1.2.3", "abc123", "go1.26"))
	srv := httptest.NewServer(Handler(reg))
	defer srv.Close()

	want := fmt.Sprintf(`# HELP rdmamesh_raft_state %s
# TYPE rdmamesh_raft_state gauge
rdmamesh_raft_state{state="candidate"} 0
rdmamesh_raft_state{state="follower"} 0
rdmamesh_raft_state{state="leader"} 1
rdmamesh_raft_state{state="shutdown"} 0
# HELP rdmamesh_raft_leader_changes_total %s
# TYPE rdmamesh_raft_leader_changes_total counter
rdmamesh_raft_leader_changes_total 3
# HELP rdmamesh_build_info %s
# TYPE rdmamesh_build_info gauge
rdmamesh_build_info{commit="abc123",goversion="go1.26",role="coordinator",version="v1.2.3"} 1
# HELP rdmamesh_cells %s
# TYPE rdmamesh_cells gauge
rdmamesh_cells{verdict="failed"} 6
rdmamesh_cells{verdict="low-bandwidth"} 1
rdmamesh_cells{verdict="ok"} 16
rdmamesh_cells{verdict="slow-latency"} 1
rdmamesh_cells{verdict="untested"} 0
`, defRaftState.Help, defLeaderChanges.Help, defBuildInfo.Help, defCells.Help)
	if err := testutil.ScrapeAndCompare(srv.URL, strings.NewReader(want), "rdmamesh_raft_state",
		"rdmamesh_raft_leader_changes_total", "rdmamesh_build_info", "rdmamesh_cells"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q, want the text exposition format", ct)
	}
	// The runtime collectors come with NewRegistry.
	if n, err := testutil.GatherAndCount(reg, "go_goroutines"); err != nil || n != 1 {
		t.Errorf("go_goroutines: %d series, err %v", n, err)
	}
}

// Prometheus may scrape while another scrape runs (two servers, or a slow
// one); the result cache must hold up (run with -race).
func TestCoordinatorConcurrentScrapes(t *testing.T) {
	src := standardSource()
	reg := newCoordinatorRegistry(t, src, CoordinatorOptions{})
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := reg.Gather()
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if src.builds < 1 {
		t.Error("no scrape built the matrix")
	}
}

// PrepareNewest derives the finished sweep's result metrics before any
// scrape, so the first scrape builds nothing; once the collector's Context
// has ended (the command is stopping), a scrape starts no walk of its own
// that shutdown would wait for.
func TestCoordinatorPrepareNewest(t *testing.T) {
	src := standardSource()
	finishS2(src)
	life, end := context.WithCancel(context.Background())
	defer end()
	c := NewCoordinator(src, CoordinatorOptions{Now: func() time.Time { return t0 }, Context: life})
	c.PrepareNewest(context.Background())
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	fams := families(t, reg)
	if v := value(t, fams, "rdmamesh_result_info", "sweep_id=s2"); v != 1 {
		t.Fatalf("result_info{s2} = %g", v)
	}
	src.mu.Lock()
	if src.builds != 1 {
		t.Fatalf("the matrix was read %d times, want once (by PrepareNewest, not by the scrape)", src.builds)
	}
	src.sweeps = append([]api.SweepInfo{{ID: "s3", State: api.SweepDone, Started: t0, Finished: t0.Add(time.Minute), CellsDone: 24}}, src.sweeps...)
	src.matrices["s3"] = newFabric(4, 2).build()
	src.mu.Unlock()
	end()
	for range 20 { // the wait for busy and ctx race; neither may walk
		fams = families(t, reg)
		if _, ok := fams["rdmamesh_result_info"]; ok || strings.HasPrefix(c.resultKey, "s3/") {
			t.Fatal("a scrape after the collector's Context ended walked the new sweep's cells")
		}
	}
	c.PrepareNewest(context.Background())
	if strings.HasPrefix(c.resultKey, "s3/") {
		t.Fatal("PrepareNewest walked after the collector's Context ended")
	}
}

// A PrepareNewest waiting for a scrape's walk gives up when its context
// ends: the web's preparer is stopped without waiting out that walk.
func TestCoordinatorPrepareNewestGivesUpWaiting(t *testing.T) {
	src := standardSource()
	c := NewCoordinator(src, CoordinatorOptions{Now: func() time.Time { return t0 }})
	c.busy <- struct{}{} // a scrape's walk under way
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan struct{})
	go func() { defer close(returned); c.PrepareNewest(ctx) }()
	cancel()
	wait.For(t, "PrepareNewest to give up its wait", func() bool {
		select {
		case <-returned:
			return true
		default:
			return false
		}
	})
	<-c.busy
}

// A walk whose context ends keeps nothing: the next scrape derives the
// metrics afresh.
func TestCoordinatorCancelledWalkKeepsNothing(t *testing.T) {
	src := standardSource()
	finishS2(src)
	c := NewCoordinator(src, CoordinatorOptions{Now: func() time.Time { return t0 }})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := c.resultMetrics(ctx, src.Sweeps()); got != nil || c.resultKey != "" {
		t.Fatalf("a cancelled walk gave %d metrics and kept %q", len(got), c.resultKey)
	}
	if got := c.resultMetrics(context.Background(), src.Sweeps()); len(got) == 0 || c.resultKey == "" {
		t.Fatal("the next walk derived nothing")
	}
}
