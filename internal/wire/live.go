package wire

import "time"

// LivePlan is the always-on mesh's probe plan as the coordinator commits
// it to raft and pushes it to the workers (liveplan.Plan, converted at the
// edges): members, their probe ports, and the rates.
type LivePlan struct {
	ID              uint64
	Start           time.Time
	RatePerHCA      float64
	GroupRate       float64
	Window          time.Duration
	ProbesPerWindow int
	Period          time.Duration
	Members         []LiveMember
	// LinkRate and Links: the steered link flows (liveplan.Link), their
	// ends as indices into Members. Version 2; none in version 1.
	LinkRate float64
	Links    []LiveLink
}

// LiveLink is one steered link flow: Members[Src] probes Members[Dst] on
// Rail with flow label Label.
type LiveLink struct {
	Src, Dst uint32
	Rail     int
	Label    uint32
}

// LiveMember is one node of the plan: Addrs[i] is its probe port on Rails[i].
type LiveMember struct {
	Name  string
	Group string
	Rails []int
	Addrs []LiveAddr
}

// LiveAddr is a probe port's address (fabric.ProbeAddr).
type LiveAddr struct {
	Node   string
	Device string
	GID    string
	LID    uint64
	QPN    uint64
	QKey   uint64
}

// LiveSummaries is a worker's answer to the coordinator's collection: its
// finished windows after the one asked for (liveplan.Summary each).
type LiveSummaries struct {
	PlanID    uint64
	Latest    int64
	Summaries []LiveSummary
}

// LiveSummary is one target's probing over one window.
type LiveSummary struct {
	Node       string
	Rail       int
	Window     int64
	Sent       int
	Answered   int
	Lost       int
	Late       int
	OutOfOrder int
	P50Ns      float64
	P99Ns      float64
	MaxNs      float64
	Held       bool
	// LocalDown/LocalDownFix: the prober's port refused to send.
	LocalDown    string
	LocalDownFix string
	// Label: a link flow's flow label; InGroup: the target is in the
	// prober's switch group (version 3; 0 and false before).
	Label   uint32
	InGroup bool
}

// LivePlanMsg is the plan's codec: the raft entry and the worker API body.
var LivePlanMsg = &Codec[LivePlan]{name: "live plan", version: 2, oldest: 1,
	put: func(w *writer, p *LivePlan) {
		w.u64(p.ID)
		w.time(p.Start)
		w.f64(p.RatePerHCA)
		w.f64(p.GroupRate)
		w.dur(p.Window)
		w.int(p.ProbesPerWindow)
		w.dur(p.Period)
		putList(w, p.Members, func(w *writer, m *LiveMember) {
			w.str(m.Name)
			w.str(m.Group)
			w.ints(m.Rails)
			putList(w, m.Addrs, func(w *writer, a *LiveAddr) {
				w.str(a.Node)
				w.str(a.Device)
				w.str(a.GID)
				w.u64(a.LID)
				w.u64(a.QPN)
				w.u64(a.QKey)
			})
		})
		w.f64(p.LinkRate)
		putList(w, p.Links, func(w *writer, l *LiveLink) {
			w.u64(uint64(l.Src))
			w.u64(uint64(l.Dst))
			w.int(l.Rail)
			w.u64(uint64(l.Label))
		})
	},
	get: func(r *reader, p *LivePlan) {
		*p = LivePlan{ID: r.u64(), Start: r.time(), RatePerHCA: r.f64(), GroupRate: r.f64(), Window: r.dur(),
			ProbesPerWindow: r.int(), Period: r.dur()}
		p.Members = getList(r, func(r *reader, m *LiveMember) {
			*m = LiveMember{Name: r.str(), Group: r.str(), Rails: r.ints()}
			m.Addrs = getList(r, func(r *reader, a *LiveAddr) {
				*a = LiveAddr{Node: r.str(), Device: r.str(), GID: r.str(), LID: r.u64(), QPN: r.u64(), QKey: r.u64()}
			})
		})
		if r.ver >= 2 {
			p.LinkRate = r.f64()
			p.Links = getList(r, func(r *reader, l *LiveLink) {
				*l = LiveLink{Src: r.u32(), Dst: r.u32(), Rail: r.int(), Label: r.u32()}
			})
		}
	}}

// LiveSummariesMsg is the worker's collection answer's codec.
var LiveSummariesMsg = &Codec[LiveSummaries]{name: "live summaries", version: 3, oldest: 2,
	put: func(w *writer, s *LiveSummaries) {
		w.u64(s.PlanID)
		w.i64(s.Latest)
		putList(w, s.Summaries, func(w *writer, x *LiveSummary) {
			w.str(x.Node)
			w.int(x.Rail)
			w.i64(x.Window)
			w.int(x.Sent)
			w.int(x.Answered)
			w.int(x.Lost)
			w.int(x.Late)
			w.int(x.OutOfOrder)
			w.f64(x.P50Ns)
			w.f64(x.P99Ns)
			w.f64(x.MaxNs)
			w.flag(x.Held)
			w.str(x.LocalDown)
			w.str(x.LocalDownFix)
			w.u64(uint64(x.Label))
			w.flag(x.InGroup)
		})
	},
	get: func(r *reader, s *LiveSummaries) {
		*s = LiveSummaries{PlanID: r.u64(), Latest: r.i64()}
		s.Summaries = getList(r, func(r *reader, x *LiveSummary) {
			*x = LiveSummary{Node: r.str(), Rail: r.int(), Window: r.i64(), Sent: r.int(), Answered: r.int(), Lost: r.int(),
				Late: r.int(), OutOfOrder: r.int(), P50Ns: r.f64(), P99Ns: r.f64(), MaxNs: r.f64(), Held: r.flag(),
				LocalDown: r.str(), LocalDownFix: r.str()}
			if r.ver >= 3 {
				x.Label, x.InGroup = r.u32(), r.flag()
			}
		})
	}}
