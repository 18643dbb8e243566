package wire

import (
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// The coordinator's durable records: what its raft entries and snapshots
// hold. They mirror what the sweep engine and the matrix work with, but
// they are the log's own types: coordinator/store converts at its
// boundary, so the analysis types can change without changing the log.

// Node is one worker as a sweep recorded it.
type Node struct {
	Name   string
	State  string
	Labels map[string]string
	Ports  []probe.Port // index = rail
}

// Attempt is one confirmation measurement of a cell.
type Attempt struct {
	Round     int
	Class     probe.Class
	Error     *probe.Error
	Latency   *probe.Latency
	Bandwidth *probe.Bandwidth
}

// Cell is one directional measurement kept whole, by node names: the cells
// the grid cannot hold (cross-rail ones, unknown nodes).
type Cell struct {
	Src       string
	Dst       string
	Rail      int
	DstRail   *int // nil = Rail
	SrcDevice string
	DstDevice string
	Round     int
	Class     probe.Class
	Error     *probe.Error
	Latency   *probe.Latency
	Bandwidth *probe.Bandwidth
	Flow      uint16 // the initiator QP's UDP source port; 0 = unknown
	BackFlow  uint16 // the responder QP's; 0 = unknown
	Retests   []Attempt
}

// Spec is a sweep's test parameters and plan, field for field the sweep
// engine's Spec (the store converts between them with a plain conversion,
// so a field added there and not here does not compile).
type Spec struct {
	Params      probe.TestParams
	PairTimeout time.Duration
	Pattern     string
	BatchSize   int
	Root        string
	RailMode    string
	Rails       []int
	Budget      time.Duration
	Retests     int
	Profile     string
}

// Pair is one unordered pair of a planned round.
type Pair struct{ A, B string }

// PlannedRound is one round of a confirmation pass's plan.
type PlannedRound struct {
	Index int
	Pairs []Pair
	Bye   string
}

// RetestPlan is one confirmation pass, fixed before it runs.
type RetestPlan struct {
	SweepID string
	Pass    int
	Rounds  []PlannedRound
	Pairs   int
}

// SweepStart is a new sweep: its header, spec and nodes.
type SweepStart struct {
	Info  api.SweepInfo
	Spec  Spec
	Nodes []Node
}

// SweepEnd is a sweep's outcome.
type SweepEnd struct {
	SweepID string
	State   string
	Error   string
	At      time.Time
	Healthy *bool
}

// StartRecord is the sweep start entry's codec.
var StartRecord = &Codec[SweepStart]{name: "sweep start", version: 1,
	put: func(w *writer, s *SweepStart) {
		w.sweepInfo(&s.Info)
		w.spec(&s.Spec)
		putList(w, s.Nodes, (*writer).node)
	},
	get: func(r *reader, s *SweepStart) {
		r.sweepInfo(&s.Info)
		r.spec(&s.Spec)
		s.Nodes = getList(r, (*reader).node)
		if r.err == nil && CheckGrid(s.Nodes) != nil {
			r.fail()
		}
	}}

// EndRecord is the sweep end entry's codec.
var EndRecord = &Codec[SweepEnd]{name: "sweep end", version: 1,
	put: func(w *writer, e *SweepEnd) {
		w.str(e.SweepID)
		w.str(e.State)
		w.str(e.Error)
		w.time(e.At)
		putOpt(w, e.Healthy, func(w *writer, b *bool) { w.flag(*b) })
	},
	get: func(r *reader, e *SweepEnd) {
		*e = SweepEnd{SweepID: r.str(), State: r.str(), Error: r.str(), At: r.time()}
		e.Healthy = getOpt(r, func(r *reader, b *bool) { *b = r.flag() })
	}}

// RetestPlanRecord is the retest plan entry's codec.
var RetestPlanRecord = &Codec[RetestPlan]{name: "retest plan", version: 1,
	put: (*writer).retestPlan,
	get: (*reader).retestPlan}

func (w *writer) node(n *Node) {
	w.str(n.Name)
	w.str(n.State)
	w.labels(n.Labels)
	putList(w, n.Ports, (*writer).port)
}

func (r *reader) node(n *Node) {
	*n = Node{Name: r.str(), State: r.str(), Labels: r.labels()}
	n.Ports = getList(r, (*reader).port)
}

func (w *writer) attempt(a *Attempt) {
	w.int(a.Round)
	w.str(string(a.Class))
	w.error(a.Error)
	w.latency(a.Latency)
	w.bandwidth(a.Bandwidth)
}

func (r *reader) attempt(a *Attempt) {
	*a = Attempt{Round: r.int(), Class: probe.Class(r.str()), Error: r.error(), Latency: r.latency(), Bandwidth: r.bandwidth()}
}

func (w *writer) cell(c *Cell) { w.cellOf(c, true) }

// cellOf writes c; with flow false, without its flows, as the layouts
// before flows did (round version 1, snapshot head version 1).
func (w *writer) cellOf(c *Cell, flow bool) {
	w.str(c.Src)
	w.str(c.Dst)
	w.int(c.Rail)
	putOpt(w, c.DstRail, func(w *writer, v *int) { w.int(*v) })
	w.str(c.SrcDevice)
	w.str(c.DstDevice)
	w.int(c.Round)
	w.str(string(c.Class))
	w.error(c.Error)
	w.latency(c.Latency)
	w.bandwidth(c.Bandwidth)
	if flow {
		w.u64(uint64(c.Flow))
		w.u64(uint64(c.BackFlow))
	}
	putList(w, c.Retests, (*writer).attempt)
}

func (r *reader) cell(c *Cell) { r.cellOf(c, true) }

// cellNoFlow reads a cell written before flows: in a round entry of
// version 1 or a snapshot before version 4.
func (r *reader) cellNoFlow(c *Cell) { r.cellOf(c, false) }

func (r *reader) cellOf(c *Cell, flow bool) {
	*c = Cell{Src: r.str(), Dst: r.str(), Rail: r.int()}
	c.DstRail = getOpt(r, func(r *reader, v *int) { *v = r.int() })
	c.SrcDevice, c.DstDevice, c.Round, c.Class = r.str(), r.str(), r.int(), probe.Class(r.str())
	c.Error, c.Latency, c.Bandwidth = r.error(), r.latency(), r.bandwidth()
	if flow {
		c.Flow, c.BackFlow = r.u16(), r.u16()
	}
	c.Retests = getList(r, (*reader).attempt)
}

func (w *writer) spec(s *Spec) {
	w.params(&s.Params)
	w.dur(s.PairTimeout)
	w.str(s.Pattern)
	w.int(s.BatchSize)
	w.str(s.Root)
	w.str(s.RailMode)
	w.ints(s.Rails)
	w.dur(s.Budget)
	w.int(s.Retests)
	w.str(s.Profile)
}

func (r *reader) spec(s *Spec) {
	*s = Spec{Params: r.params(), PairTimeout: r.dur(), Pattern: r.str(), BatchSize: r.int(), Root: r.str(), RailMode: r.str(),
		Rails: r.ints(), Budget: r.dur(), Retests: r.int(), Profile: r.str()}
}

func (w *writer) retestPlan(p *RetestPlan) {
	w.str(p.SweepID)
	w.int(p.Pass)
	putList(w, p.Rounds, func(w *writer, rd *PlannedRound) {
		w.int(rd.Index)
		putList(w, rd.Pairs, func(w *writer, p *Pair) {
			w.str(p.A)
			w.str(p.B)
		})
		w.str(rd.Bye)
	})
	w.int(p.Pairs)
}

func (r *reader) retestPlan(p *RetestPlan) {
	*p = RetestPlan{SweepID: r.str(), Pass: r.int()}
	p.Rounds = getList(r, func(r *reader, rd *PlannedRound) {
		rd.Index = r.int()
		rd.Pairs = getList(r, func(r *reader, p *Pair) { *p = Pair{A: r.str(), B: r.str()} })
		rd.Bye = r.str()
	})
	p.Pairs = r.int()
}

// sweepInfo is the public API's sweep header, field by field: the log
// keeps what the API shows, and TestEveryFieldRoundTrips fails when a field
// is added there and not here.
func (w *writer) sweepInfo(s *api.SweepInfo) {
	w.str(s.ID)
	w.str(s.State)
	w.str(s.Mode)
	w.strs(s.Nodes)
	for _, v := range [...]int{s.Rails, s.Rounds, s.RoundsDone, s.Cells, s.CellsDone, s.RetestPass, s.Retested} {
		w.int(v)
	}
	w.time(s.Started)
	w.time(s.Finished)
	w.str(s.Error)
	putOpt(w, s.Healthy, func(w *writer, b *bool) { w.flag(*b) })
	putOpt(w, s.Spec, (*writer).sweepRequest)
}

func (r *reader) sweepInfo(s *api.SweepInfo) {
	*s = api.SweepInfo{ID: r.str(), State: r.str(), Mode: r.str(), Nodes: r.strs()}
	for _, v := range [...]*int{&s.Rails, &s.Rounds, &s.RoundsDone, &s.Cells, &s.CellsDone, &s.RetestPass, &s.Retested} {
		*v = r.int()
	}
	s.Started, s.Finished, s.Error = r.time(), r.time(), r.str()
	s.Healthy = getOpt(r, func(r *reader, b *bool) { *b = r.flag() })
	s.Spec = getOpt(r, (*reader).sweepRequest)
}

func (w *writer) sweepRequest(q *api.SweepRequest) {
	w.str(q.Mode)
	w.strs(q.Nodes)
	w.str(q.Hosts)
	w.labels(q.Labels)
	w.str(q.Pattern)
	w.int(q.BatchSize)
	w.str(q.Root)
	w.str(q.RailMode)
	w.ints(q.Rails)
	for _, v := range [...]int{q.LatencyIters, q.LatencySize, q.BWSize, q.BWIters} {
		w.int(v)
	}
	w.str(q.Connect)
	w.str(q.PairTimeout)
	w.str(q.Budget)
	putOpt(w, q.Retests, func(w *writer, v *int) { w.int(*v) })
	w.str(q.Profile)
}

func (r *reader) sweepRequest(q *api.SweepRequest) {
	*q = api.SweepRequest{Mode: r.str(), Nodes: r.strs(), Hosts: r.str(), Labels: r.labels(), Pattern: r.str(), BatchSize: r.int(),
		Root: r.str(), RailMode: r.str(), Rails: r.ints()}
	for _, v := range [...]*int{&q.LatencyIters, &q.LatencySize, &q.BWSize, &q.BWIters} {
		*v = r.int()
	}
	q.Connect, q.PairTimeout, q.Budget = r.str(), r.str(), r.str()
	q.Retests = getOpt(r, func(r *reader, v *int) { *v = r.int() })
	q.Profile = r.str()
}
