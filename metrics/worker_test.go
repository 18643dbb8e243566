package metrics

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

type fakeWorker struct {
	inv     probe.Inventory
	members int
}

func (f *fakeWorker) Inventory() probe.Inventory { return f.inv }
func (f *fakeWorker) Members() int               { return f.members }

func newWorkerSource() *fakeWorker {
	return &fakeWorker{members: 5, inv: probe.Inventory{Node: "n1", Generation: 7,
		Ports: []probe.Port{
			{Device: "mlx5_0", Port: 1, Rail: 0, Usable: true},
			{Device: "mlx5_1", Port: 1, Rail: 1, Usable: false, UnusableWhy: "port not ACTIVE"},
		},
		Checks: []probe.Check{{Name: "memlock", Status: "fail"}, {Name: "devices", Status: "ok"},
			{Name: "rdma_netns", Status: "warn"}, {Name: "cap_ipc_lock", Status: "fail"}},
	}}
}

func TestWorkerCounters(t *testing.T) {
	w := NewWorker()
	reg := prometheus.NewRegistry()
	reg.MustRegister(w)
	// Before SetSource only the counters exist, all classes at zero.
	fams := families(t, reg)
	if _, ok := fams["rdmamesh_worker_gossip_members"]; ok {
		t.Error("gossip members exported before SetSource")
	}
	// Every class a cell can end in is pre-set, so a rate() over it starts from zero.
	if n, want := series(fams, "rdmamesh_worker_tests_total"), 1+len(failureClasses); n != want {
		t.Errorf("tests_total has %d pre-set classes, want %d (ok and every failure class)", n, want)
	}

	w.ObserveTask(wire.TaskResult{Elapsed: 20 * time.Millisecond, Rails: []wire.RailResult{
		{Rail: 0, Class: probe.ClassOK}, {Rail: 1, Class: probe.ClassRetryExceeded}}})
	w.ObserveTask(wire.TaskResult{Elapsed: 3 * time.Second, Rails: []wire.RailResult{{Rail: 0}}})
	w.ObserveSession(nil)
	w.ObserveSession(&probe.Error{Class: probe.ClassNoNetdev, Cause: "no netdev"})
	w.ObserveSession(errors.New("something unclassified"))

	checks := []struct {
		got, want float64
		what      string
	}{
		{testutil.ToFloat64(w.tasks), 2, "tasks"},
		{testutil.ToFloat64(w.tests.WithLabelValues("ok")), 1, "tests{ok}"},
		{testutil.ToFloat64(w.tests.WithLabelValues("retry-exceeded")), 1, "tests{retry-exceeded}"},
		// A rail result without a class counts as internal, not as a new label.
		{testutil.ToFloat64(w.tests.WithLabelValues("internal")), 1, "tests{internal}"},
		{testutil.ToFloat64(w.sessions.WithLabelValues("ok")), 1, "sessions{ok}"},
		{testutil.ToFloat64(w.sessions.WithLabelValues("no-netdev")), 1, "sessions{no-netdev}"},
		{testutil.ToFloat64(w.sessions.WithLabelValues("internal")), 1, "sessions{internal}"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %g, want %g", c.what, c.got, c.want)
		}
	}
	h := families(t, reg)["rdmamesh_worker_task_duration_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 2 || !near(h.GetSampleSum(), 3.02) {
		t.Errorf("task histogram count %d sum %g, want 2 and 3.02", h.GetSampleCount(), h.GetSampleSum())
	}
	for _, b := range h.GetBucket() {
		want := uint64(0)
		if b.GetUpperBound() >= 0.025 {
			want = 1
		}
		if b.GetUpperBound() >= 5 {
			want = 2
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("bucket le=%g: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
}

func TestWorkerSourceMetrics(t *testing.T) {
	w := NewWorker()
	w.SetSource(newWorkerSource())
	reg := NewRegistry()
	reg.MustRegister(w)
	srv := httptest.NewServer(Handler(reg))
	defer srv.Close()
	want := `# HELP rdmamesh_worker_port_usable ` + defWorkerPortUsable.Help + `
# TYPE rdmamesh_worker_port_usable gauge
rdmamesh_worker_port_usable{device="mlx5_0",port="1",rail="0"} 1
rdmamesh_worker_port_usable{device="mlx5_1",port="1",rail="1"} 0
# HELP rdmamesh_worker_checks ` + defWorkerChecks.Help + `
# TYPE rdmamesh_worker_checks gauge
rdmamesh_worker_checks{status="fail"} 2
rdmamesh_worker_checks{status="ok"} 1
rdmamesh_worker_checks{status="warn"} 1
# HELP rdmamesh_worker_gossip_members ` + defWorkerMembers.Help + `
# TYPE rdmamesh_worker_gossip_members gauge
rdmamesh_worker_gossip_members 5
# HELP rdmamesh_worker_inventory_generation ` + defWorkerGeneration.Help + `
# TYPE rdmamesh_worker_inventory_generation gauge
rdmamesh_worker_inventory_generation 7
`
	if err := testutil.ScrapeAndCompare(srv.URL, strings.NewReader(want), "rdmamesh_worker_port_usable",
		"rdmamesh_worker_checks", "rdmamesh_worker_gossip_members", "rdmamesh_worker_inventory_generation"); err != nil {
		t.Fatal(err)
	}
}
