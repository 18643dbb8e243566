package sweep

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// harness runs the engine without raft or HTTP, in the way nomad's
// scheduler Harness runs a scheduler: the Dispatcher answers from a table
// of outcomes, and the Committer and View are one in-memory record that
// keeps every commit, so a test can look at what landed and how often.
type harness struct {
	t *testing.T

	mu  sync.Mutex
	rec Record
	// cells as committed, by direction and rail; retest rounds add
	// attempts, as the store does.
	cells   map[string]matrix.Cell
	commits map[int]int // round index → CommitRound calls that landed
	plans   []RetestPlan
	ended   bool
	state   string
	msg     string
	healthy *bool

	// outcomes is the table the fake workers answer from: "src>dst" →
	// the class of each successive dispatch of that direction (the last
	// one repeats); a direction not listed measures OK.
	outcomes   map[string][]probe.Class
	dispatched map[string]int // "src>dst" → dispatches so far
	rounds     map[int]int    // round index → phases dispatched
	// beforePhase, when set, runs at each dispatch (with mu held).
	beforePhase func(t Task)
	// failCommit makes CommitRound of that round index fail once.
	failCommit map[int]bool
	clock      time.Time
}

func newHarness(t *testing.T, nodes, rails int, spec Spec) *harness {
	t.Helper()
	h := &harness{t: t, cells: map[string]matrix.Cell{}, commits: map[int]int{}, outcomes: map[string][]probe.Class{},
		dispatched: map[string]int{}, rounds: map[int]int{}, failCommit: map[int]bool{},
		clock: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var names []string
	for i := 0; i < nodes; i++ {
		n := matrix.Node{Name: fmt.Sprintf("n%d", i), State: "alive"}
		for r := 0; r < rails; r++ {
			n.Ports = append(n.Ports, probe.Port{Device: fmt.Sprintf("mlx5_%d", r), Port: 1, Rail: r, Usable: true, State: "ACTIVE"})
		}
		h.rec.Nodes = append(h.rec.Nodes, n)
		names = append(names, n.Name)
	}
	rounds, err := PlanRounds(spec, names)
	if err != nil {
		t.Fatal(err)
	}
	// As the coordinator commits a sweep's start.
	h.rec.Info = api.SweepInfo{ID: "s", State: api.SweepRunning, Nodes: names, Rails: rails, Rounds: len(rounds),
		Cells: CountCells(spec, h.rec.Nodes, rounds), Started: h.clock}
	h.rec.Spec = spec
	h.rec.Rounds, h.rec.Retests = map[int]bool{}, map[int]RetestPlan{}
	return h
}

func (h *harness) engine() *Engine {
	return &Engine{View: h, Commit: h, Dispatch: h, Log: slog.New(slog.DiscardHandler),
		Now: func() time.Time { h.mu.Lock(); defer h.mu.Unlock(); return h.clock }}
}

func (h *harness) run(ctx context.Context) { h.engine().Run(ctx, "s") }

// Phase is the fake workers: each direction of the task as a dispatch of
// its own, as the workers run them.
func (h *harness) Phase(_ context.Context, out []matrix.Cell, t Task) []matrix.Cell {
	h.mu.Lock()
	defer h.mu.Unlock()
	out = h.direction(out, t)
	if len(t.Reverse) > 0 {
		out = h.direction(out, Task{SweepID: t.SweepID, Round: t.Round, Spec: t.Spec, Src: t.Dst, Dst: t.Src, Rails: t.Reverse})
	}
	return out
}

func (h *harness) direction(out []matrix.Cell, t Task) []matrix.Cell {
	if h.beforePhase != nil {
		h.beforePhase(t)
	}
	dir := t.Src.Name + ">" + t.Dst.Name
	class := probe.ClassOK
	if seq := h.outcomes[dir]; len(seq) > 0 {
		class = seq[min(h.dispatched[dir], len(seq)-1)]
	}
	h.dispatched[dir]++
	h.rounds[t.Round]++
	if class != probe.ClassOK {
		return append(out, FailCells(t.Src.Name, t.Dst.Name, t.Round, t.Rails, &probe.Error{Class: class, Cause: "fake " + string(class), Fix: "none"})...)
	}
	for _, rp := range t.Rails {
		c := CellFor(t.Src.Name, t.Dst.Name, t.Round, rp)
		c.Class, c.Latency = probe.ClassOK, &probe.Latency{Samples: 100, MinNs: 990, P50Ns: 1000, P90Ns: 1010, P99Ns: 1050, P999Ns: 1100, MaxNs: 1200, StdevNs: 5}
		out = append(out, c)
	}
	return out
}

func cellID(c *matrix.Cell) string { return fmt.Sprintf("%s>%s/%d", c.Src, c.Dst, c.Rail) }

// CommitRound takes the round's cells at once, as the store encodes them
// before raft has the entry (the engine reuses their space), and lands
// them when waited for.
func (h *harness) CommitRound(r RoundResult) func() (int, error) {
	r.Cells = slices.Clone(r.Cells)
	return func() (int, error) { return h.land(r) }
}

func (h *harness) land(r RoundResult) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failCommit[r.Round] {
		delete(h.failCommit, r.Round)
		return 0, errors.New("fake: lost leadership before the entry committed")
	}
	h.commits[r.Round]++
	if h.rec.Rounds[r.Round] {
		return 0, nil // the store ignores a round that landed already
	}
	retest := false
	for _, p := range h.rec.Retests {
		retest = retest || slices.ContainsFunc(p.Rounds, func(rd scheduler.Round) bool { return rd.Index == r.Round })
	}
	for _, c := range r.Cells {
		old, seen := h.cells[cellID(&c)]
		if retest && seen {
			old.Retests = append(old.Retests, matrix.Attempt{Round: c.Round, Class: c.Class, Error: c.Error, Latency: c.Latency})
			c = old
		}
		h.cells[cellID(&c)] = c
	}
	h.rec.Rounds[r.Round] = true
	h.rec.Info.RoundsDone = len(h.rec.Rounds)
	h.rec.Info.CellsDone = len(h.cells)
	return len(r.Cells), nil
}

func (h *harness) CommitRetestPlan(p RetestPlan) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.plans = append(h.plans, p)
	if _, dup := h.rec.Retests[p.Pass]; !dup {
		h.rec.Retests[p.Pass] = p
		h.rec.Info.Rounds += len(p.Rounds)
		h.rec.Info.RetestPass, h.rec.Info.Retested = p.Pass, h.rec.Info.Retested+p.Pairs
	}
	return nil
}

func (h *harness) EndSweep(_, state, msg string, healthy *bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ended, h.state, h.msg, h.healthy = true, state, msg, healthy
	h.rec.Info.State = state
	return nil
}

func (h *harness) Record(string) (Record, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.rec
	r.Rounds, r.Retests, r.Nodes = maps.Clone(h.rec.Rounds), maps.Clone(h.rec.Retests), slices.Clone(h.rec.Nodes)
	return r, true
}

func (h *harness) Info(string) (api.SweepInfo, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rec.Info, true
}

func (h *harness) Matrix(string) (*matrix.Matrix, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	th := matrix.DefaultThresholds()
	th.TestedOnly = h.rec.Spec.TestedOnly()
	return matrix.Build(h.rec.Nodes, slices.Collect(maps.Values(h.cells)), th), true
}

// checkComplete fails unless every main round landed exactly once and the
// record holds every cell the plan promised.
func (h *harness) checkComplete() {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for r := 0; r < h.rec.Info.Rounds; r++ {
		if h.commits[r] != 1 {
			h.t.Errorf("round %d committed %d times; want once", r, h.commits[r])
		}
	}
	if len(h.cells) != h.rec.Info.Cells {
		h.t.Errorf("%d cells committed; the plan has %d", len(h.cells), h.rec.Info.Cells)
	}
}
