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
	// Links tune the watch over the plan's steered link flows.
	Links LinkOptions
}

func (o Options) orDefaults() Options {
	o.Horizon = cmp.Or(o.Horizon, 3)
	o.LossFail = cmp.Or(o.LossFail, 0.02)
	o.MinProbes = cmp.Or(o.MinProbes, 5)
	return o
}

// key is a directed cell: interned initiator and target ids and the rail.
// Keys and records hold no pointers, so the garbage collector never scans
// the million-odd cells a 1,024 x 8 fabric keeps (it did, and spent more
// time on them than the analysis).
type key uint64

const maxRail = 255

func mkKey(src, dst uint32, rail int) key {
	return key(uint64(src)<<32 | uint64(dst)<<8 | uint64(rail))
}

func (k key) src() uint32 { return uint32(k >> 32) }
func (k key) dst() uint32 { return uint32(k>>8) & 0xffffff }
func (k key) rail() int   { return int(k & 0xff) }

// rec is what the judgement needs of a summary.
type rec struct {
	window         int64
	answered, lost int32
	p50, p99, max  float32
	held           bool
}

func recOf(s liveplan.Summary) rec {
	return rec{window: s.Window, answered: int32(min(max(s.Answered, 0), 1<<30)), lost: int32(min(max(s.Lost, 0), 1<<30)),
		p50: float32(s.P50Ns), p99: float32(s.P99Ns), max: float32(s.MaxNs), held: s.Held}
}

// downNote is a prober's own port refusing to send: its cause and fix.
type downNote struct{ cause, fix string }

// Matrix is the rolling live state. Safe for concurrent use.
type Matrix struct {
	opts Options

	mu     sync.Mutex
	ids    map[string]uint32 // node name → id; grows with the members ever seen
	names  []string          // by id
	cells  map[key]rec
	downs  map[key]downNote   // the cells whose prober's port was down
	latest int64              // newest window folded
	pruned int64              // latest when cells were last aged out
	totals map[int]*[2]uint64 // rail → probes answered, lost (monotonic)
	links  *linkWatch         // the steered link flows' summaries
}

// New makes an empty live matrix.
func New(opts Options) *Matrix {
	return &Matrix{opts: opts.orDefaults(), ids: map[string]uint32{}, cells: map[key]rec{}, downs: map[key]downNote{},
		latest: -1, pruned: -1, totals: map[int]*[2]uint64{}, links: newLinkWatch(opts.Links)}
}

// id interns a node name. The caller holds mu.
func (m *Matrix) id(name string) uint32 {
	if id, ok := m.ids[name]; ok {
		return id
	}
	id := uint32(len(m.names))
	m.ids[name] = id
	m.names = append(m.names, name)
	return id
}

// Fold records src's summaries. A summary of a window older than the one
// held for its cell is ignored (a slow collection must not undo a newer
// one); summaries of a held window (a sweep paused the HCA) are kept only
// if they judged enough probes.
func (m *Matrix) Fold(src string, sums []liveplan.Summary) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sid := m.id(src)
	for _, s := range sums {
		if s.Held && s.Answered+s.Lost < m.opts.MinProbes && s.LocalDown == "" {
			continue
		}
		if s.Rail < 0 || s.Rail > maxRail || len(m.names) >= 1<<24 {
			continue // not a rail this store can key; no fabric has them
		}
		if s.Label != 0 { // a link flow: judged by cable, not as the pair's cell
			m.links.fold(sid, m.id(s.Node), s)
			continue
		}
		if s.InGroup {
			m.links.foldHosts(src, s.Node, s)
		}
		k := mkKey(sid, m.id(s.Node), s.Rail)
		old, ok := m.cells[k]
		if ok && old.window > s.Window {
			continue
		}
		if !ok || old.window < s.Window { // a re-sent window counts once
			t := m.totals[s.Rail]
			if t == nil {
				t = new([2]uint64)
				m.totals[s.Rail] = t
			}
			t[0] += uint64(max(s.Answered, 0))
			t[1] += uint64(max(s.Lost, 0))
		}
		m.cells[k] = recOf(s)
		if s.LocalDown != "" {
			m.downs[k] = downNote{s.LocalDown, s.LocalDownFix}
		} else {
			delete(m.downs, k)
		}
		m.latest = max(m.latest, s.Window)
	}
	if m.latest != m.pruned { // a collection folds every worker: age out once a window, not per worker
		m.prune()
		m.pruned = m.latest
	}
}

func (m *Matrix) prune() {
	for k, r := range m.cells {
		if r.window <= m.latest-m.opts.Horizon {
			delete(m.cells, k)
			delete(m.downs, k)
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
	for k, r := range m.cells {
		d, down := m.downs[k]
		class, ok := m.fate(r, down)
		if !ok {
			continue
		}
		out = append(out, m.cell(m.names[k.src()], m.names[k.dst()], k.rail(), r, class, d))
	}
	return out
}

// fate is a cell's class, and whether enough probes were judged to say
// anything: silence, or LossFail of them lost, fails a cell; a prober
// whose port refused to send makes it port-down.
func (m *Matrix) fate(r rec, down bool) (probe.Class, bool) {
	n := int(r.answered) + int(r.lost)
	switch {
	case down:
		return probe.ClassPortDown, true
	case n < m.opts.MinProbes:
		return "", false
	case r.answered == 0, float64(r.lost) >= m.opts.LossFail*float64(n):
		return probe.ClassRetryExceeded, true
	}
	return probe.ClassOK, true
}

func (m *Matrix) cell(src, dst string, rail int, r rec, class probe.Class, d downNote) matrix.Cell {
	c := matrix.Cell{Src: src, Dst: dst, Rail: rail, Round: int(r.window), Class: class}
	n := r.answered + r.lost
	switch {
	case class == probe.ClassPortDown:
		c.Error = &probe.Error{Class: class,
			Cause: fmt.Sprintf("%s's probe port on rail %d refuses to send (window %d): %s", src, rail, r.window, d.cause),
			Fix:   cmp.Or(d.fix, "bring the port up: check `ibstat`, the cable and the switch port")}
	case class == probe.ClassOK:
		// A probe's round trip, halved, is comparable with a sweep's
		// one-way latency; the population rules judge it the same way.
		c.Latency = &probe.Latency{Samples: int(r.answered), P50Ns: float64(r.p50) / 2, P99Ns: float64(r.p99) / 2, MaxNs: float64(r.max) / 2}
	case r.answered == 0:
		c.Error = &probe.Error{Class: class,
			Cause: fmt.Sprintf("none of %d live probes from %s to %s on rail %d was answered (window %d)", n, src, dst, rail, r.window),
			Fix:   "the path is broken or the target's port is down: check both ports (`ibstat`), the cable and the switch ports between them"}
	default:
		c.Error = &probe.Error{Class: class,
			Cause: fmt.Sprintf("%.1f%% of %d live probes from %s to %s on rail %d were lost (window %d): RDMA traffic on this path is being retransmitted",
				100*float64(r.lost)/float64(n), n, src, dst, rail, r.window),
			Fix: "look for drops on this path: switch port error and discard counters, a degraded cable or optics, PFC/ECN configuration on RoCE"}
	}
	return c
}

// Analyse judges the live cells over nodes. Only probed cells count
// (TestedOnly): the plan probes a slice of the fabric at a time. The
// analysis reads a sorted snapshot of the judged cells as a matrix
// FigureSource, so neither the N x N x rails grid nor a Cell per probed
// pair is ever built; a drill-down builds its cell on demand.
func (m *Matrix) Analyse(nodes []matrix.Node, th matrix.Thresholds) *matrix.Matrix {
	if th == (matrix.Thresholds{}) {
		th = matrix.DefaultThresholds()
	}
	th.TestedOnly = true
	sn := m.snapshot(nodes)
	a := matrix.Analyse(nodes, sn, nil, th)
	sn.lossyHCAs(a, nodes, m.opts.LossFail)
	return a
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
		_, down := m.downs[k]
		class, ok := m.fate(s, down)
		if !ok {
			continue
		}
		r := get(k.rail())
		r.Cells++
		if class != probe.ClassOK {
			r.BadCells++
		}
		j := judged[k.rail()]
		j[0] += int(s.answered)
		j[1] += int(s.lost)
		judged[k.rail()] = j
		if s.answered > 0 && s.p50 > 0 {
			sec := float64(s.p50) / 1e9
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

// JudgeLinks judges the link flows once per new window, routing them
// with r (version names its topology: flows are routed again when it
// changes), and returns the episodes it opened and closed.
func (m *Matrix) JudgeLinks(r LinkRouter, version string) (opened, closed []api.LiveLink) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.links.judge(r, version, m.names)
}

// SetLinkRouter routes the windows folded from now on (JudgeLinks does
// too): the probes between leaf mates are placed by it as they are
// folded, so the leader sets it with each plan, before collecting.
func (m *Matrix) SetLinkRouter(r LinkRouter, version string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.links.route(r, version)
}

// Links is the link episodes open now, the newest first.
func (m *Matrix) Links() []api.LiveLink {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.links.links()
}

// Horizon is how many windows a cell stays after it was last probed.
func (m *Matrix) Horizon() int64 { return m.opts.Horizon }
