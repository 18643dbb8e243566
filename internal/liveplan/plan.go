// Package liveplan decides which peers each HCA probes between sweeps (the
// always-on mesh), and how often, so that the probing stays far below line
// rate and still covers every same-rail pair within a period.
//
// The plan is the Pingmesh / R-Pingmesh split: every HCA probes the HCAs of
// its own switch group on its rail all the time (a leaf's ports fail
// together and first), plus a rotating slice of the rest of the rail, one
// slice per window, so that after Coverage.Period it has probed every
// same-rail peer. The coordinator commits a Plan (members and parameters);
// every worker derives its own targets from it with Targets. Nothing per
// pair is stored or sent (members and groups alone are 29 kB on the wire at
// 1,024 x 8 and 116 kB at 4,096 x 8; each probe address adds its GID and
// QPN), and two replicas, or a worker and the coordinator, derive the same
// targets from the same plan.
//
// It is pure: no clock (callers pass the time), no I/O. It imports only the
// seam's address type (internal/fabric).
package liveplan

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
)

// Member is one node as the plan sees it.
type Member struct {
	Name  string `json:"name"`
	Group string `json:"group,omitempty"` // switch group (leaf, rack); "" = none
	Rails []int  `json:"rails"`           // rails the node has an HCA on, ascending
	// Addrs are the node's probe ports, Addrs[i] on Rails[i]; the plan
	// carries them so a worker needs nothing but the plan to probe.
	Addrs []fabric.ProbeAddr `json:"addrs,omitempty"`
}

// Params are the plan's knobs; zero fields take the defaults.
type Params struct {
	// RatePerHCA caps the probes one HCA sends per second, in-group and
	// rotation together. 50/s of 64-byte probes is ~26 kb/s: 0.00001% of a
	// 200 Gb/s port.
	RatePerHCA float64 `json:"rate_per_hca"`
	// GroupRate is the probes per second to each peer of the own group.
	GroupRate float64 `json:"group_rate"`
	// Window is how long one rotation slice is probed before the next.
	Window time.Duration `json:"window"`
	// ProbesPerWindow is what each out-of-group target of the current
	// slice gets within its window: enough to tell loss from one drop.
	ProbesPerWindow int `json:"probes_per_window"`
	// Period, when set, bounds how long a same-rail pair may go unprobed:
	// New refuses a plan that cannot meet it under RatePerHCA. 0 = as
	// often as the rate cap allows (Coverage says how often that is), so
	// that a larger cluster degrades coverage instead of losing probing.
	Period time.Duration `json:"period,omitempty"`
	// LinkRate is the probes per second of each steered link flow
	// (Plan.Links), within RatePerHCA: enough that a cable losing 2 %
	// loses several probes of every flow through it each window.
	LinkRate float64 `json:"link_rate,omitempty"`
}

// Defaults: 50 probes/s per HCA, which covers every pair of a 1,024-node
// fabric in 32-node groups within 4.5 minutes.
func Defaults() Params {
	return Params{RatePerHCA: 50, GroupRate: 1, Window: 10 * time.Second, ProbesPerWindow: 5, LinkRate: 8}
}

// WithDefaults fills the zero fields with Defaults'.
func (p Params) WithDefaults() Params {
	d := Defaults()
	p.RatePerHCA = cmp.Or(p.RatePerHCA, d.RatePerHCA)
	p.GroupRate = cmp.Or(p.GroupRate, d.GroupRate)
	p.Window = cmp.Or(p.Window, d.Window)
	p.ProbesPerWindow = cmp.Or(p.ProbesPerWindow, d.ProbesPerWindow)
	p.LinkRate = cmp.Or(p.LinkRate, d.LinkRate)
	return p
}

// Validate names the first field that cannot work.
func (p Params) Validate() error {
	switch {
	case p.RatePerHCA < 0 || math.IsNaN(p.RatePerHCA) || math.IsInf(p.RatePerHCA, 0):
		return fmt.Errorf("live.rate_per_hca = %v: want a positive number of probes per second (default 50)", p.RatePerHCA)
	case p.GroupRate < 0 || math.IsNaN(p.GroupRate) || math.IsInf(p.GroupRate, 0):
		return fmt.Errorf("live.group_rate = %v: want a positive number of probes per second per peer (default 1)", p.GroupRate)
	case p.Window < 0 || (p.Window > 0 && p.Window < time.Second):
		return fmt.Errorf("live.window = %v: want at least 1s (default 10s)", p.Window)
	case p.ProbesPerWindow < 0:
		return fmt.Errorf("live.probes_per_window = %d: want a positive count (default 5)", p.ProbesPerWindow)
	case p.LinkRate < 0 || math.IsNaN(p.LinkRate) || math.IsInf(p.LinkRate, 0):
		return fmt.Errorf("live.link_rate = %v: want a positive number of probes per second per link flow (default 8)", p.LinkRate)
	case p.Period < 0:
		return fmt.Errorf("live.period = %v: want a positive duration (default 10m)", p.Period)
	}
	return nil
}

// Plan is what the coordinator commits: who is probed, by what rule.
type Plan struct {
	// ID grows with every new plan (membership or parameter change), so a
	// worker can tell a newer plan from the one it runs.
	ID      uint64    `json:"id"`
	Start   time.Time `json:"start"` // window 0 begins here
	Params  Params    `json:"params"`
	Members []Member  `json:"members"` // by name
	// Links are the steered flows that keep every cable between switches
	// probed (SetLinks); none without a topology.
	Links []Link `json:"links,omitempty"`

	rails   map[int]*railView
	linksOf map[linkKey][]Link
}

// railView is one rail's members in plan order, with the lookups Targets
// needs; derived, never serialised.
type railView struct {
	rail   int
	names  []string
	groups []string
	addrs  []fabric.ProbeAddr
	pos    map[string]int
}

// Target is one peer an HCA probes now.
type Target struct {
	Node    string
	Addr    fabric.ProbeAddr
	Rate    float64 // probes per second
	InGroup bool
	// Label is a link flow's flow label (0: not a link flow); its probes
	// carry it, so they take the path the plan chose.
	Label uint32
}

// Coverage is what a plan achieves.
type Coverage struct {
	// Period is the worst case, over every HCA, between two probes of
	// the same pair: Slices x Window for the busiest rail.
	Period time.Duration
	// MaxGroup is the largest in-group fan-out, and MaxRate the highest
	// probe rate any HCA sends at.
	MaxGroup int
	MaxRate  float64
	// LinkFlows are the plan's steered link flows, and MinLinkRate the
	// slowest of them, probes/s (0: none).
	LinkFlows   int
	MinLinkRate float64
}

// ErrNoMembers is a plan over nobody.
var ErrNoMembers = errors.New("liveplan: no members with a rail to probe")

// New builds plan id over members starting at start. It fails, naming the
// knob to turn, when the rate cap cannot cover every pair within Period.
func New(id uint64, members []Member, p Params, start time.Time) (*Plan, Coverage, error) {
	if err := p.Validate(); err != nil {
		return nil, Coverage{}, err
	}
	p = p.WithDefaults()
	ms := slices.Clone(members)
	slices.SortFunc(ms, func(a, b Member) int { return cmp.Compare(a.Name, b.Name) })
	ms = slices.CompactFunc(ms, func(a, b Member) bool { return a.Name == b.Name })
	pl := &Plan{ID: id, Start: start, Params: p, Members: ms}
	pl.index()
	if len(pl.rails) == 0 {
		return nil, Coverage{}, ErrNoMembers
	}
	cov := pl.coverage()
	if cov.MaxRate > p.RatePerHCA*(1+1e-9) {
		return nil, cov, fmt.Errorf("live probing: the largest switch group needs %.1f probes/s per HCA at live.group_rate %v, over live.rate_per_hca %v: lower live.group_rate or raise live.rate_per_hca",
			cov.MaxRate, p.GroupRate, p.RatePerHCA)
	}
	if p.Period > 0 && cov.Period > p.Period {
		return nil, cov, fmt.Errorf("live probing: at live.rate_per_hca %v every pair is probed only every %v, over live.period %v: raise live.rate_per_hca, lower live.probes_per_window or lengthen live.period",
			p.RatePerHCA, cov.Period, p.Period)
	}
	return pl, cov, nil
}

func (pl *Plan) index() {
	pl.rails = map[int]*railView{}
	for _, m := range pl.Members {
		for i, r := range m.Rails {
			v := pl.rails[r]
			if v == nil {
				v = &railView{rail: r, pos: map[string]int{}}
				pl.rails[r] = v
			}
			v.pos[m.Name] = len(v.names)
			v.names = append(v.names, m.Name)
			v.groups = append(v.groups, m.Group)
			var a fabric.ProbeAddr
			if i < len(m.Addrs) {
				a = m.Addrs[i]
			}
			v.addrs = append(v.addrs, a)
		}
	}
}

// budget splits an HCA's rate: in-group peers first, then its link flows
// (linkLoad probes/s), then the rotation slice size that the rest of the cap affords (at least one target, so a
// plan always makes progress).
func (pl *Plan) budget(groupPeers int, linkLoad float64) (slice int, rate float64) {
	p := pl.Params
	perTarget := float64(p.ProbesPerWindow) / p.Window.Seconds()
	left := p.RatePerHCA - p.GroupRate*float64(groupPeers) - linkLoad
	slice = max(1, int(math.Floor(left/perTarget+1e-9)))
	return slice, perTarget
}

func (pl *Plan) coverage() Coverage {
	var c Coverage
	for _, v := range pl.rails {
		sizes := map[string]int{}
		for _, g := range v.groups {
			sizes[g]++
		}
		for i, g := range v.groups {
			peers := groupPeers(g, sizes)
			others := len(v.names) - 1 - peers
			nl := len(pl.linksOf[linkKey{v.names[i], v.rail}])
			lr := pl.linkRate(peers, nl)
			slice, perTarget := pl.budget(peers, lr*float64(nl))
			slices := 0
			if others > 0 {
				slices = (others + slice - 1) / slice
			}
			c.Period = max(c.Period, time.Duration(max(slices, 1))*pl.Params.Window)
			c.MaxGroup = max(c.MaxGroup, peers)
			c.MaxRate = max(c.MaxRate, pl.Params.GroupRate*float64(peers)+lr*float64(nl)+perTarget*float64(min(slice, others)))
			if nl > 0 {
				c.LinkFlows += nl
				c.MinLinkRate = min(cmp.Or(c.MinLinkRate, lr), lr)
			}
		}
	}
	return c
}

func groupPeers(g string, sizes map[string]int) int {
	if g == "" {
		return 0 // no group known: everyone is reached by rotation
	}
	return sizes[g] - 1
}

// WindowAt is the rotation window at a moment (window 0 before Start) and
// when the next one begins.
func (pl *Plan) WindowAt(at time.Time) (int64, time.Time) {
	w := int64(0)
	if d := at.Sub(pl.Start); d > 0 {
		w = int64(d / pl.Params.Window)
	}
	return w, pl.Start.Add(time.Duration(w+1) * pl.Params.Window)
}

// Targets is what self's HCA on rail probes at the moment at: its group
// peers, then the current rotation slice. Each HCA starts its rotation at
// a different offset (its position times the slice size), so in any one
// window every node is the target of about one slice's worth of senders,
// not of the whole rail at once.
func (pl *Plan) Targets(self string, rail int, at time.Time) []Target {
	v := pl.rails[rail] // plans come from New or JSON, both indexed
	if v == nil {
		return nil
	}
	me, ok := v.pos[self]
	if !ok {
		return nil
	}
	myGroup := v.groups[me]
	var out []Target
	var others []int
	for j, name := range v.names {
		switch {
		case j == me:
		case myGroup != "" && v.groups[j] == myGroup:
			out = append(out, Target{Node: name, Addr: v.addrs[j], Rate: pl.Params.GroupRate, InGroup: true})
		default:
			others = append(others, j)
		}
	}
	peers := len(out)
	links := pl.linksOf[linkKey{self, rail}]
	lr := pl.linkRate(peers, len(links))
	for _, l := range links {
		out = append(out, Target{Node: l.Dst, Addr: v.addrs[v.pos[l.Dst]], Rate: lr, Label: l.Label})
	}
	m := len(others)
	if m == 0 {
		return out
	}
	slice, perTarget := pl.budget(peers, lr*float64(len(links)))
	slice = min(slice, m)
	nSlices := int64((m + slice - 1) / slice)
	w, _ := pl.WindowAt(at)
	start := (me*slice + int(w%nSlices)*slice) % m
	for t := 0; t < slice; t++ {
		j := others[(start+t)%m]
		out = append(out, Target{Node: v.names[j], Addr: v.addrs[j], Rate: perTarget})
	}
	return out
}
