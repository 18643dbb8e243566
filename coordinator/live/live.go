// Package live folds the workers' always-on probe summaries into a rolling
// matrix, judged by the same verdict and localization code as a sweep
// (package matrix), so the heatmap, /metrics and the gate can say what is
// wrong between sweeps.
//
// A live cell is one directed (initiator, target, rail) as the newest
// window that probed it saw it. Cells older than the horizon are dropped,
// so memory follows the plan's probes per window times the horizon, not
// the time the coordinator has been up.
package live

import (
	"cmp"
	"fmt"
	"slices"
	"sync"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/liveplan"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// Options tune the judgement; zero fields take the defaults.
type Options struct {
	// Horizon is how many windows a cell stays after it was last probed
	// (3: half a minute with 10 s windows). A rotation target comes back
	// only after the plan's coverage period, so the live matrix is the
	// fabric as probed recently, not all of it.
	Horizon int64
	// LossFail is the probe loss ratio that fails a cell (0.02). RDMA
	// transports recover loss by retransmission, so a few percent of
	// loss is already a job-slowing fault; one lost probe of fifty is not.
	LossFail float64
	// MinProbes is the probes with a known fate a cell needs to be judged
	// at all (5).
	MinProbes int
}

func (o Options) orDefaults() Options {
	o.Horizon = cmp.Or(o.Horizon, 3)
	o.LossFail = cmp.Or(o.LossFail, 0.02)
	o.MinProbes = cmp.Or(o.MinProbes, 5)
	return o
}

type cellKey struct {
	src, dst string
	rail     int
}

// Matrix is the rolling live state. Safe for concurrent use.
type Matrix struct {
	opts Options

	mu     sync.Mutex
	cells  map[cellKey]liveplan.Summary
	latest int64              // newest window folded
	pruned int64              // latest when cells were last aged out
	totals map[int]*[2]uint64 // rail → probes answered, lost (monotonic)
}

// New makes an empty live matrix.
func New(opts Options) *Matrix {
	return &Matrix{opts: opts.orDefaults(), cells: map[cellKey]liveplan.Summary{}, latest: -1, pruned: -1,
		totals: map[int]*[2]uint64{}}
}

// Fold records src's summaries. A summary of a window older than the one
// held for its cell is ignored (a slow collection must not undo a newer
// one); summaries of a held window (a sweep paused the HCA) are kept only
// if they judged enough probes.
func (m *Matrix) Fold(src string, sums []liveplan.Summary) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range sums {
		if s.Held && s.Answered+s.Lost < m.opts.MinProbes {
			continue
		}
		k := cellKey{src: src, dst: s.Node, rail: s.Rail}
		old, ok := m.cells[k]
		if ok && old.Window > s.Window {
			continue
		}
		if !ok || old.Window < s.Window { // a re-sent window counts once
			t := m.totals[s.Rail]
			if t == nil {
				t = new([2]uint64)
				m.totals[s.Rail] = t
			}
			t[0] += uint64(max(s.Answered, 0))
			t[1] += uint64(max(s.Lost, 0))
		}
		m.cells[k] = s
		m.latest = max(m.latest, s.Window)
	}
	if m.latest != m.pruned { // a collection folds every worker: age out once a window, not per worker
		m.prune()
		m.pruned = m.latest
	}
}

func (m *Matrix) prune() {
	for k, s := range m.cells {
		if s.Window <= m.latest-m.opts.Horizon {
			delete(m.cells, k)
		}
	}
}

// Len is the cells held; Latest the newest window folded (-1: none).
func (m *Matrix) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.cells)
}

func (m *Matrix) Latest() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.latest
}

// Cells turns the held summaries into matrix cells: a failure when the
// probes were lost (all, or at least LossFail of them), a latency figure
// otherwise. Round is the window. Cells with too few judged probes are
// left out, and so stay untested.
func (m *Matrix) Cells() []matrix.Cell {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]matrix.Cell, 0, len(m.cells))
	for k, s := range m.cells {
		if c, ok := m.cell(k, s); ok {
			out = append(out, c)
		}
	}
	return out
}

// fate is a summary's class, and whether enough probes were judged to say
// anything: silence, or LossFail of them lost, fails a cell.
func (m *Matrix) fate(s liveplan.Summary) (probe.Class, bool) {
	switch {
	case s.LocalDown != "":
		return probe.ClassPortDown, true
	case s.Answered+s.Lost < m.opts.MinProbes:
		return "", false
	case s.Answered == 0, s.LossRatio() >= m.opts.LossFail:
		return probe.ClassRetryExceeded, true
	}
	return probe.ClassOK, true
}

func (m *Matrix) cell(k cellKey, s liveplan.Summary) (matrix.Cell, bool) {
	class, ok := m.fate(s)
	if !ok {
		return matrix.Cell{}, false
	}
	c := matrix.Cell{Src: k.src, Dst: k.dst, Rail: k.rail, Round: int(s.Window), Class: class}
	n := s.Answered + s.Lost
	switch {
	case class == probe.ClassPortDown:
		c.Error = &probe.Error{Class: class,
			Cause: fmt.Sprintf("%s's probe port on rail %d refuses to send (window %d): %s", k.src, k.rail, s.Window, s.LocalDown),
			Fix:   cmp.Or(s.LocalDownFix, "bring the port up: check `ibstat`, the cable and the switch port")}
	case class == probe.ClassOK:
		// A probe's round trip, halved, is comparable with a sweep's
		// one-way latency; the population rules judge it the same way.
		c.Latency = &probe.Latency{Samples: s.Answered, P50Ns: s.P50Ns / 2, P99Ns: s.P99Ns / 2, MaxNs: s.MaxNs / 2}
	case s.Answered == 0:
		c.Error = &probe.Error{Class: class,
			Cause: fmt.Sprintf("none of %d live probes from %s to %s on rail %d was answered (window %d)", n, k.src, k.dst, k.rail, s.Window),
			Fix:   "the path is broken or the target's port is down: check both ports (`ibstat`), the cable and the switch ports between them"}
	default:
		c.Error = &probe.Error{Class: class,
			Cause: fmt.Sprintf("%.1f%% of %d live probes from %s to %s on rail %d were lost (window %d): RDMA traffic on this path is being retransmitted",
				100*s.LossRatio(), n, k.src, k.dst, k.rail, s.Window),
			Fix: "look for drops on this path: switch port error and discard counters, a degraded cable or optics, PFC/ECN configuration on RoCE"}
	}
	return c, true
}

// Analyse judges the live cells over nodes. Only probed cells count
// (TestedOnly): the plan probes a slice of the fabric at a time. The
// result is compact (a byte a cell): Build would materialise a Result for
// every one of the N x N x rails cells, probed or not.
func (m *Matrix) Analyse(nodes []matrix.Node, th matrix.Thresholds) *matrix.Matrix {
	if th == (matrix.Thresholds{}) {
		th = matrix.DefaultThresholds()
	}
	th.TestedOnly = true
	return matrix.Analyse(nodes, nil, m.Cells(), th)
}

// Rails reports each rail's probing for /metrics, rails in order.
func (m *Matrix) Rails() []api.LiveRail {
	m.mu.Lock()
	defer m.mu.Unlock()
	by := map[int]*api.LiveRail{}
	get := func(rail int) *api.LiveRail {
		r := by[rail]
		if r == nil {
			r = &api.LiveRail{Rail: rail, RTTBuckets: make([]uint64, len(api.LiveRTTBounds))}
			by[rail] = r
		}
		return r
	}
	for rail, t := range m.totals {
		r := get(rail)
		r.ProbesAnswered, r.ProbesLost = t[0], t[1]
	}
	judged := map[int][2]int{} // rail → answered, lost over judged cells
	for k, s := range m.cells {
		class, ok := m.fate(s)
		if !ok {
			continue
		}
		r := get(k.rail)
		r.Cells++
		if class != probe.ClassOK {
			r.BadCells++
		}
		j := judged[k.rail]
		j[0] += s.Answered
		j[1] += s.Lost
		judged[k.rail] = j
		if s.Answered > 0 && s.P50Ns > 0 {
			sec := s.P50Ns / 1e9
			for i, b := range api.LiveRTTBounds {
				if sec <= b {
					r.RTTBuckets[i]++
				}
			}
			r.RTTCount++
			r.RTTSumSeconds += sec
		}
	}
	out := make([]api.LiveRail, 0, len(by))
	for rail, r := range by {
		if j := judged[rail]; j[0]+j[1] > 0 {
			r.LossRatio = float64(j[1]) / float64(j[0]+j[1])
		}
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b api.LiveRail) int { return cmp.Compare(a.Rail, b.Rail) })
	return out
}

// Horizon is how many windows a cell stays after it was last probed.
func (m *Matrix) Horizon() int64 { return m.opts.Horizon }
