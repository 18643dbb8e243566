// Package livelinks measures the always-on mesh's link watch on a
// simulated fat tree (make bench-live-links; the figures are in
// docs/scale.md, "Live link coverage"): how soon a cable that starts
// dropping packets is named, whether anything else is, and whether a long
// run with a flapping cable stays flat in memory and reports each
// flapping spell once.
//
// What runs is the product's: the leader's plan of link flows
// (coordinator.LiveLinks, liveplan), the simulated fabric's routing of
// each flow's probes and answers over the cables and its faults
// (sim.Fabric.ProbeSurvival), and the leader's fold and link watch
// (coordinator/live), through the topology's router. What it stands in
// for is the workers and the wire: each flow's window is drawn whole,
// its probes lost at the chance its path gives, so thousands of windows
// of a 4,096-node fabric take minutes, not days.
package livelinks

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator"
	"github.com/rdmamesh/rdmamesh/coordinator/live"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
	"github.com/rdmamesh/rdmamesh/internal/liveplan"
	"github.com/rdmamesh/rdmamesh/topology"
)

// Config is one fabric to measure on.
type Config struct {
	Tree   string // topology.GenerateFatTree's spec
	Preset string // the simulated HCAs ("" = roce-8x400)
	Seed   uint64
	// Params are the live plan's (zero fields: the product's defaults:
	// 10 s windows, 8 probes/s a link flow).
	Params liveplan.Params
	// Watch tunes the link watch (zero: the product's defaults).
	Watch live.LinkOptions
}

// flow is one link flow as the rig draws it.
type flow struct {
	src      string
	from, to fabric.ProbeAddr
	rail     int
	label    uint32
	probes   int     // a window's
	survive  float64 // a probe and its answer both come through
	previous float64 // survive before the newest fault change
}

// Fleet is the fabric, its plan and the leader's live state.
type Fleet struct {
	cfg    Config
	Topo   *topology.Topology
	fab    *sim.Fabric
	Plan   *liveplan.Plan
	Cov    liveplan.Coverage
	flows  []flow
	router live.LinkRouter
	rng    *rand.Rand
	M      *live.Matrix
	window int64
}

// NewFleet lays the tree, plans the link flows and starts an empty live
// state.
func NewFleet(cfg Config) (*Fleet, error) {
	cfg.Preset = cmp.Or(cfg.Preset, "roce-8x400")
	cfg.Params = cfg.Params.WithDefaults()
	ft, topo, err := topology.GenerateFatTree(cfg.Tree)
	if err != nil {
		return nil, err
	}
	fab, err := sim.New(sim.Config{Preset: cfg.Preset, Seed: int64(cfg.Seed), Topology: topo})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var members []liveplan.Member
	for h, x := range topo.HCAs {
		if !seen[x.Node] {
			seen[x.Node] = true
			members = append(members, liveplan.Member{Name: x.Node, Group: topo.Switches[topo.LeafOf(h)].Name})
		}
	}
	dev := func(rail int) string { return cmp.Or(ft.DevicePrefix, "mlx5_") + fmt.Sprint(rail) }
	for i := range members {
		m := &members[i]
		for r := range ft.Rails {
			if _, ok := topo.HCA(m.Name, r); ok {
				m.Rails = append(m.Rails, r)
				m.Addrs = append(m.Addrs, fabric.ProbeAddr{Node: m.Name, Device: dev(r), QPN: uint32(0x100 + i)})
			}
		}
	}
	links, unmatched, err := coordinator.LiveLinks(topo, members)
	if err != nil {
		return nil, err
	}
	if len(unmatched) > 0 {
		return nil, fmt.Errorf("the tree's own nodes do not match its topology: %v", unmatched[:min(3, len(unmatched))])
	}
	pl, _, err := liveplan.New(1, members, cfg.Params, time.Unix(0, 0))
	if err != nil {
		return nil, err
	}
	cov, err := pl.SetLinks(links)
	if err != nil {
		return nil, err
	}
	f := &Fleet{cfg: cfg, Topo: topo, fab: fab, Plan: pl, Cov: cov, router: coordinator.LinkRouter(topo),
		rng: rand.New(rand.NewPCG(cfg.Seed, 7)), M: live.New(live.Options{Links: cfg.Watch})}
	secs := cfg.Params.Window.Seconds()
	for _, m := range members {
		for _, r := range m.Rails {
			for _, t := range pl.Targets(m.Name, r, time.Unix(0, 0)) {
				if t.Label == 0 {
					continue
				}
				to := t.Addr
				to.FlowLabel = t.Label
				from := fabric.ProbeAddr{Node: m.Name, Device: dev(r)}
				f.flows = append(f.flows, flow{src: m.Name, from: from, to: to, rail: r, label: t.Label,
					probes: max(1, int(t.Rate*secs+0.5)), survive: 1, previous: 1})
			}
		}
	}
	return f, nil
}

// Flows is how many link flows the plan probes.
func (f *Fleet) Flows() int { return len(f.flows) }

// SetFaults replaces the fabric's faults (sim fault specs) from the next
// window on.
func (f *Fleet) SetFaults(specs []string) error {
	faults, err := sim.ParseFaults(specs)
	if err != nil {
		return err
	}
	if err := f.fab.SetFaults(faults); err != nil {
		return err
	}
	for i := range f.flows {
		fl := &f.flows[i]
		fl.previous, fl.survive = fl.survive, f.fab.ProbeSurvival(fl.from, fl.to)
	}
	return nil
}

// Reset forgets the leader's live state (a new episode book), keeping the
// plan.
func (f *Fleet) Reset() { f.M = live.New(live.Options{Links: f.cfg.Watch}) }

// Window draws the next window of every flow, folds it as the leader's
// collection would and judges it. onset is where in the window the newest
// fault change took effect (0: before it began; 0.5: halfway): the probes
// before it fared as the flows did before.
func (f *Fleet) Window(onset float64) (opened, closed []api.LiveLink) {
	w := f.window
	f.window++
	by := map[string][]liveplan.Summary{}
	for _, fl := range f.flows {
		before := int(float64(fl.probes)*onset + 0.5)
		lost := f.draw(before, fl.previous) + f.draw(fl.probes-before, fl.survive)
		by[fl.src] = append(by[fl.src], liveplan.Summary{Node: fl.to.Node, Rail: fl.rail, Label: fl.label, Window: w,
			Sent: fl.probes, Answered: fl.probes - lost, Lost: lost})
	}
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		f.M.Fold(n, by[n])
	}
	for i := range f.flows {
		f.flows[i].previous = f.flows[i].survive
	}
	return f.M.JudgeLinks(f.router, "rig")
}

// draw is how many of n probes are lost when each comes through with
// chance survive.
func (f *Fleet) draw(n int, survive float64) int {
	if survive >= 1 {
		return 0
	}
	lost := 0
	for range n {
		if f.rng.Float64() >= survive {
			lost++
		}
	}
	return lost
}

// SwitchCables are the cables between two switches, the link flows'
// business.
func (f *Fleet) SwitchCables() []int {
	var out []int
	for i, c := range f.Topo.Cables {
		if !c.A.IsHCA() && !c.B.IsHCA() {
			out = append(out, i)
		}
	}
	return out
}

// CableSpec is the sim fault spec for an effect on a cable, both ways or
// (oneWay) from its A end to its B end only, and the name the watch
// gives it.
func (f *Fleet) CableSpec(c int, effect string, oneWay bool) (spec, name string) {
	cb := f.Topo.Cables[c]
	dir := "~"
	if oneWay {
		dir = ">"
	}
	return "cable=" + f.Topo.EndName(cb.A) + dir + f.Topo.EndName(cb.B) + ":" + effect, f.Topo.CableName(c)
}
