package metrics

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// CoordinatorSource is what the coordinator collector reads at scrape time;
// *coordinator.Coordinator implements it (wiring_test.go checks).
type CoordinatorSource interface {
	// Nodes lists every member the coordinator knows, workers with their
	// inventory when fetched.
	Nodes() []api.NodeInfo
	// Sweeps lists the kept sweeps, newest first.
	Sweeps() []api.SweepInfo
	// Matrix analyses one sweep.
	Matrix(id string) (*matrix.Matrix, bool)
	// RaftState is raft.RaftState.String() of this replica: "Leader",
	// "Follower", "Candidate" or "Shutdown".
	RaftState() string
	// LeaderChanges counts the times this replica gained or lost
	// leadership since it started (monotonic).
	LeaderChanges() uint64
}

// CoordinatorOptions bound what the collector exports.
type CoordinatorOptions struct {
	// WorstPairs is K for rdmamesh_pair_*: that many slowest and that many
	// narrowest cells are exported. 0 means 10; negative exports none.
	WorstPairs int
	// TopSuspects is K for rdmamesh_suspect_bad_cells. 0 means 20; negative
	// exports none.
	TopSuspects int
	// NoHCA drops the per-HCA series (rdmamesh_hca_*), the largest family
	// (nodes x rails each), for fabrics where that is too many.
	NoHCA bool
	// Now is the clock for the running sweep's duration; tests set it.
	Now func() time.Time
	// Context is the collector's life: a walk of a sweep's cells under way
	// (a scrape's, or PrepareNewest's) ends with it and keeps nothing, so
	// a stopping coordinator never waits out a pass over 134 M cells. Nil:
	// it never ends.
	Context context.Context
}

// Coordinator is a prometheus.Collector over a CoordinatorSource.
type Coordinator struct {
	src  CoordinatorSource
	opts CoordinatorOptions

	// The result sweep's metrics are derived from its matrix, which is
	// costly to build on a large fabric; a finished sweep does not change,
	// so they are kept until another sweep finishes. busy is held while
	// they are read or derived: a channel, so that a wait for a walk under
	// way can end with its context.
	busy      chan struct{}
	resultKey string
	result    []prometheus.Metric
}

var _ prometheus.Collector = (*Coordinator)(nil)

// NewCoordinator returns a collector; register it with a registry.
func NewCoordinator(src CoordinatorSource, o CoordinatorOptions) *Coordinator {
	if o.WorstPairs == 0 {
		o.WorstPairs = 10
	}
	if o.TopSuspects == 0 {
		o.TopSuspects = 20
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Context == nil {
		o.Context = context.Background()
	}
	return &Coordinator{src: src, opts: o, busy: make(chan struct{}, 1)}
}

// Describe sends every descriptor, so the registry checks label consistency.
func (c *Coordinator) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range coordDefs {
		ch <- d.desc
	}
}

// Collect reads the source once per scrape.
func (c *Coordinator) Collect(ch chan<- prometheus.Metric) {
	var out []prometheus.Metric
	add := func(d *def, v float64, labels ...string) { out = append(out, d.metric(v, labels...)) }
	c.membership(add)
	c.raft(add)
	sweeps := c.src.Sweeps()
	c.current(add, sweeps)
	for _, m := range out {
		ch <- m
	}
	for _, m := range c.resultMetrics(c.opts.Context, sweeps) {
		ch <- m
	}
}

// PrepareNewest derives the newest finished sweep's result metrics unless
// they are already kept, so that the first scrape after a sweep finds them
// ready instead of walking every cell (4 to 5 s on two cores at 4,096 x 8,
// half of Prometheus's default scrape timeout). The web server's preparer
// calls it (web.Options.Prepare) after the UI's first views and before its
// p50 layer: run beside that walk, it took 8.8 s. It returns when done, or
// when ctx or the collector's Context ends, keeping nothing then; a scrape
// that comes meanwhile waits for it.
func (c *Coordinator) PrepareNewest(ctx context.Context) {
	if c.opts.Context.Err() != nil {
		return // AfterFunc would cancel at once, but after the walk began
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.opts.Context, cancel)()
	c.resultMetrics(ctx, c.src.Sweeps())
}

type adder func(d *def, v float64, labels ...string)

var (
	knownRoles  = []string{"worker", "coordinator"}
	knownStates = []string{"alive", "suspect", "dead", "left"}
)

func (c *Coordinator) membership(add adder) {
	counts := map[[2]string]int{}
	for _, r := range knownRoles {
		for _, s := range knownStates {
			counts[[2]string{r, s}] = 0
		}
	}
	for _, n := range c.src.Nodes() {
		counts[[2]string{n.Role, n.State}]++
		add(defNodeAlive, b2f(n.State == "alive"), n.Name, n.Role)
		if n.Inventory == nil {
			continue
		}
		failed := 0
		for _, ch := range n.Inventory.Checks {
			if ch.Status == "fail" {
				failed++
			}
		}
		add(defNodeFailedChecks, float64(failed), n.Name)
		if c.opts.NoHCA {
			continue
		}
		for _, p := range n.Inventory.Ports {
			add(defHCAUsable, b2f(p.Usable), n.Name, p.Device, strconv.Itoa(p.Rail))
		}
	}
	for k, v := range counts {
		add(defMembers, float64(v), k[0], k[1])
	}
}

var raftStates = []string{"leader", "follower", "candidate", "shutdown"}

func (c *Coordinator) raft(add adder) {
	state := strings.ToLower(c.src.RaftState())
	seen := false
	for _, s := range raftStates {
		add(defRaftState, b2f(s == state), s)
		seen = seen || s == state
	}
	if !seen && state != "" {
		// A state raft adds later still shows up instead of vanishing.
		add(defRaftState, 1, state)
	}
	add(defLeaderChanges, float64(c.src.LeaderChanges()))
}

func (c *Coordinator) current(add adder, sweeps []api.SweepInfo) {
	byState := map[string]int{api.SweepRunning: 0, api.SweepDone: 0, api.SweepFailed: 0}
	for _, s := range sweeps {
		byState[s.State]++
	}
	for st, n := range byState {
		add(defSweeps, float64(n), st)
	}
	if len(sweeps) == 0 {
		return
	}
	s := sweeps[0]
	add(defSweepInfo, 1, s.ID, s.Mode, s.State)
	add(defSweepRunning, b2f(s.State == api.SweepRunning))
	add(defSweepNodes, float64(len(s.Nodes)))
	add(defSweepRounds, float64(s.Rounds))
	add(defSweepRoundsDone, float64(s.RoundsDone))
	add(defSweepCells, float64(s.Cells))
	add(defSweepCellsDone, float64(s.CellsDone))
	add(defSweepStart, unixSeconds(s.Started))
	end := s.Finished
	if end.IsZero() {
		end = c.opts.Now()
	}
	add(defSweepDuration, max(end.Sub(s.Started).Seconds(), 0))
}

// resultMetrics returns the cached metrics of the newest finished sweep,
// rebuilding them when that sweep changed; nil when ctx ends first.
func (c *Coordinator) resultMetrics(ctx context.Context, sweeps []api.SweepInfo) []prometheus.Metric {
	var done *api.SweepInfo
	for i := range sweeps {
		if sweeps[i].State == api.SweepDone {
			done = &sweeps[i]
			break
		}
	}
	select {
	case c.busy <- struct{}{}:
	case <-ctx.Done():
		return nil
	}
	defer func() { <-c.busy }()
	if ctx.Err() != nil {
		return nil // both were ready, and select took busy
	}
	if done == nil {
		c.resultKey, c.result = "", nil
		return nil
	}
	key := done.ID + "/" + strconv.Itoa(done.CellsDone) + "/" + done.Finished.String()
	if key == c.resultKey {
		return c.result
	}
	m, ok := c.src.Matrix(done.ID)
	if !ok {
		// Dropped between Sweeps and Matrix; the next scrape sees the new list.
		return nil
	}
	var out []prometheus.Metric
	add := func(d *def, v float64, labels ...string) { out = append(out, d.metric(v, labels...)) }
	if resultSummary(ctx, add, *done, m, c.opts) != nil {
		return nil
	}
	c.resultKey, c.result = key, out
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func unixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}
