package metrics

import (
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// WorkerSource is what the worker collector reads at scrape time;
// *worker.Agent has both methods.
type WorkerSource interface {
	Inventory() probe.Inventory
	Members() int
}

var (
	defWorkerTasks = newDef(Spec{Name: "rdmamesh_worker_tasks_total", Type: typeCounter, Role: "worker", Series: "1",
		Help: "Pair tasks this worker ran as initiator (one task = one src->dst pair, all rails in parallel)."})
	defWorkerTests = newDef(Spec{Name: "rdmamesh_worker_tests_total", Type: typeCounter, Role: "worker",
		Labels: []string{"class"}, Series: "11 (ok + one per failure class)",
		Help: "Rail tests this worker initiated, by result class (one per rail of each task)."})
	defWorkerTaskSeconds = newDef(Spec{Name: "rdmamesh_worker_task_duration_seconds", Type: typeHistogram, Role: "worker",
		Series: "18 (16 buckets incl. +Inf, sum, count)",
		Help:   "Wall time of a pair task from receipt to result, all rails included."})
	defWorkerSessions = newDef(Spec{Name: "rdmamesh_worker_sessions_served_total", Type: typeCounter, Role: "worker",
		Labels: []string{"class"}, Series: "11 (ok + one per failure class)",
		Help: "Responder sessions this worker served for initiating peers, by result class."})
	defWorkerMembers = newDef(Spec{Name: "rdmamesh_worker_gossip_members", Type: typeGauge, Role: "worker", Series: "1",
		Help: "Gossip members this worker sees, itself included; 1 means it has not joined anyone."})
	defWorkerPortUsable = newDef(Spec{Name: "rdmamesh_worker_port_usable", Type: typeGauge, Role: "worker",
		Labels: []string{"device", "port", "rail"}, Series: "one per HCA port of the node",
		Help: "1 when discovery marks the port usable for tests, 0 when not."})
	defWorkerChecks = newDef(Spec{Name: "rdmamesh_worker_checks", Type: typeGauge, Role: "worker",
		Labels: []string{"status"}, Series: "3 (ok, warn, fail)",
		Help: "Host preflight checks by status, as `rdmamesh doctor` reports them."})
	defWorkerGeneration = newDef(Spec{Name: "rdmamesh_worker_inventory_generation", Type: typeGauge, Role: "worker",
		Series: "1", Help: "Inventory generation published in gossip; it rises when the worker re-describes its HCAs."})

	workerDefs = []*def{defWorkerTasks, defWorkerTests, defWorkerTaskSeconds, defWorkerSessions, defWorkerMembers,
		defWorkerPortUsable, defWorkerChecks, defWorkerGeneration}
)

// taskBuckets span a sim task (milliseconds) to a pair hitting its default
// 10 s deadline and beyond.
var taskBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Worker collects a worker's metrics: counters fed by ObserveTask and
// ObserveSession, the rest read from the WorkerSource at scrape time.
type Worker struct {
	src      atomic.Pointer[WorkerSource]
	tasks    prometheus.Counter
	tests    *prometheus.CounterVec
	taskDur  prometheus.Histogram
	sessions *prometheus.CounterVec
}

var _ prometheus.Collector = (*Worker)(nil)

// NewWorker returns a collector with every class pre-set to zero, so
// rate() works from the first failure on.
func NewWorker() *Worker {
	w := &Worker{
		tasks: prometheus.NewCounter(prometheus.CounterOpts{Name: defWorkerTasks.Name, Help: defWorkerTasks.Help}),
		tests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: defWorkerTests.Name, Help: defWorkerTests.Help},
			defWorkerTests.Labels),
		taskDur: prometheus.NewHistogram(prometheus.HistogramOpts{Name: defWorkerTaskSeconds.Name,
			Help: defWorkerTaskSeconds.Help, Buckets: taskBuckets}),
		sessions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: defWorkerSessions.Name,
			Help: defWorkerSessions.Help}, defWorkerSessions.Labels),
	}
	for _, c := range append([]probe.Class{probe.ClassOK}, failureClasses...) {
		w.tests.WithLabelValues(string(c))
		w.sessions.WithLabelValues(string(c))
	}
	return w
}

// SetSource attaches the running agent; the worker starts after the
// collector is built (it takes ObserveTask as an option), hence a setter.
// Until it is called the inventory and gossip metrics are absent.
func (w *Worker) SetSource(s WorkerSource) { w.src.Store(&s) }

// ObserveTask records one finished task; call it with every result the
// worker returns to the coordinator.
func (w *Worker) ObserveTask(r wire.TaskResult) {
	w.tasks.Inc()
	w.taskDur.Observe(r.Elapsed.Seconds())
	for _, rr := range r.Rails {
		w.tests.WithLabelValues(classOf(rr.Class)).Inc()
	}
}

// ObserveSession records one responder session that ended; err is what the
// session returned (nil when it served the test to the end).
func (w *Worker) ObserveSession(err error) {
	cl := probe.ClassOK
	if err != nil {
		cl = probe.Classify(err).Class
	}
	w.sessions.WithLabelValues(string(cl)).Inc()
}

// classOf keeps the label set closed: an empty class (a result that never
// set one) counts as internal rather than inventing a label value.
func classOf(c probe.Class) string {
	if c == "" {
		return string(probe.ClassInternal)
	}
	return string(c)
}

// Describe sends every descriptor.
func (w *Worker) Describe(ch chan<- *prometheus.Desc) {
	w.tasks.Describe(ch)
	w.tests.Describe(ch)
	w.taskDur.Describe(ch)
	w.sessions.Describe(ch)
	for _, d := range []*def{defWorkerMembers, defWorkerPortUsable, defWorkerChecks, defWorkerGeneration} {
		ch <- d.desc
	}
}

// Collect sends the counters and reads the source.
func (w *Worker) Collect(ch chan<- prometheus.Metric) {
	w.tasks.Collect(ch)
	w.tests.Collect(ch)
	w.taskDur.Collect(ch)
	w.sessions.Collect(ch)
	p := w.src.Load()
	if p == nil {
		return
	}
	src := *p
	ch <- defWorkerMembers.metric(float64(src.Members()))
	inv := src.Inventory()
	ch <- defWorkerGeneration.metric(float64(inv.Generation))
	for _, port := range inv.Ports {
		ch <- defWorkerPortUsable.metric(b2f(port.Usable), port.Device, strconv.Itoa(port.Port), strconv.Itoa(port.Rail))
	}
	checks := map[string]int{"ok": 0, "warn": 0, "fail": 0}
	for _, c := range inv.Checks {
		checks[c.Status]++
	}
	for st, n := range checks {
		ch <- defWorkerChecks.metric(float64(n), st)
	}
}
