// Package links measures link localization: seeded sweeps of the
// simulated fabric laid over a generated rail-optimized fat tree, with
// random cable, link and switch faults injected (down, flapping, lossy,
// slow, one direction, two at once) and healthy runs, each cell measured
// as a worker measures it (its flow routes it over the tree) and judged
// by the matrix with the topology. Per fault type it counts the runs
// whose first suspects named the injected parts (recall) and the link
// suspects that named healthy parts (precision). A run stops before its
// heap passes Config.MaxHeap. It has no production code; `make
// bench-links` prints its table.
package links

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/topology"
)

// Config of one measurement.
type Config struct {
	Tree   string // topology.ParseFatTree spec
	Preset string // sim preset with the tree's rails and link layer
	Runs   int    // runs per fault type
	Seed   int64
	Params probe.TestParams
	// MaxHeap stops a run whose heap would pass it (bytes; 0 =
	// DefaultMaxHeap): the machine is shared.
	MaxHeap uint64
	// Pattern is "" (every ordered pair of the faulted planes) or
	// PatternFabric (what a fabric sweep tests).
	Pattern string
}

// Kind is a fault type of the table.
type Kind struct {
	Name   string
	Effect string // sim effect list
	Target string // "link" (switch to switch), "host" (HCA cable), "switch", "oneway"
	Double bool   // two faults of this kind at once
	Clean  bool
}

// Kinds are the fault types the table reports.
func Kinds() []Kind {
	return []Kind{
		{Name: "healthy", Clean: true},
		{Name: "link down", Effect: "down", Target: "link"},
		{Name: "link loss 1%", Effect: "loss=1%", Target: "link"},
		{Name: "link loss 2%", Effect: "loss=2%", Target: "link"},
		{Name: "link loss 5%", Effect: "loss=5%", Target: "link"},
		{Name: "link 30% slow", Effect: "bw=0.7", Target: "link"},
		{Name: "link one-way 2%", Effect: "loss=2%", Target: "oneway"},
		{Name: "link flapping 20%", Effect: "flap=20%", Target: "link"},
		{Name: "host cable 2%", Effect: "loss=2%", Target: "host"},
		{Name: "switch down", Effect: "down", Target: "switch"},
		{Name: "switch loss 2%", Effect: "loss=2%", Target: "switch"},
		{Name: "2 links loss 2%", Effect: "loss=2%", Target: "link", Double: true},
	}
}

// Row is one fault type's tally.
type Row struct {
	Kind
	Runs, Hit  int // runs whose first suspects named every injected part
	Named      int // link, cable and switch suspects named (confident ones)
	WrongNamed int // of them, naming a healthy part
	Healthy    int // runs with no link, cable or switch suspect at all
	// Misses describe the runs that missed or named a healthy part: the
	// faults and the first suspects.
	Misses []string
	// Faults were put on rails below Planes of Rails (fitPlanes).
	Planes, Rails int
	Wall          time.Duration // of the runs, measuring and analysing
}

// injected is one fault: its spec and how a right suspect names it.
type injected struct {
	spec string
	want func(s *matrix.Suspect) bool
}

// Measure runs cfg.Runs sweeps per kind.
func Measure(ctx context.Context, cfg Config, kinds []Kind) ([]Row, error) {
	ft, err := topology.ParseFatTree(cfg.Tree)
	if err != nil {
		return nil, err
	}
	topo, err := ft.Generate()
	if err != nil {
		return nil, err
	}
	spec, err := sim.Preset(cfg.Preset)
	if err != nil {
		return nil, err
	}
	if spec.HCAs != ft.Rails {
		return nil, fmt.Errorf("preset %s has %d HCAs, the tree %d rails", cfg.Preset, spec.HCAs, ft.Rails)
	}
	names := ft.NodeNames()
	var planned map[int][]steeredCell
	if cfg.Pattern == PatternFabric {
		if planned, err = fabricCells(topo, names, ft.Rails); err != nil {
			return nil, err
		}
	}
	planes, err := fitPlanes(cfg, len(names), ft.Rails, planned)
	if err != nil {
		return nil, err
	}
	rows := make([]Row, len(kinds))
	for ki, k := range kinds {
		rows[ki].Kind, rows[ki].Planes, rows[ki].Rails = k, planes, ft.Rails
		for run := range cfg.Runs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			seed := cfg.Seed + int64(ki)*1_000_003 + int64(run)
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			var faults []injected
			if !k.Clean {
				faults = pick(topo, rng, k, planes)
			}
			rails := map[int]bool{0: len(faults) == 0}
			for _, f := range faults {
				rails[railOf(topo, f.spec)] = true
			}
			start := time.Now()
			m, err := sweep(ctx, cfg, topo, spec, names, faults, rails, seed, planned)
			if err != nil {
				return nil, err
			}
			rows[ki].Wall += time.Since(start)
			rows[ki].add(m, faults)
		}
	}
	return rows, nil
}

func (r *Row) add(m *matrix.Matrix, faults []injected) {
	r.Runs++
	var named []*matrix.Suspect
	for i := range m.Suspects {
		s := &m.Suspects[i]
		if isLinkKind(s.Kind) && s.Confidence >= matrix.LowConfidence {
			named = append(named, s)
		}
	}
	if len(named) == 0 {
		r.Healthy++
	}
	r.Named += len(named)
	for _, s := range named {
		right := false
		for _, f := range faults {
			right = right || f.want(s)
		}
		if !right {
			r.WrongNamed++
		}
	}
	if len(faults) == 0 {
		if len(named) > 0 {
			r.miss(m, nil)
		}
		return
	}
	// Every injected part among the first len(faults) suspects.
	top := m.Suspects[:min(len(faults), len(m.Suspects))]
	all := true
	for _, f := range faults {
		found := false
		for i := range top {
			found = found || f.want(&top[i])
		}
		all = all && found
	}
	if all {
		r.Hit++
	}
	if !all || len(named) > len(faults) {
		r.miss(m, faults)
	}
}

func (r *Row) miss(m *matrix.Matrix, faults []injected) {
	var b strings.Builder
	for _, f := range faults {
		b.WriteString(f.spec + " ")
	}
	for i := range min(4, len(m.Suspects)) {
		s := &m.Suspects[i]
		fmt.Fprintf(&b, "\n    %d. %s %s%s %v conf %.2f: %s", i+1, s.Kind, s.Node, s.Switch, s.Ends, s.Confidence, s.Reason)
	}
	r.Misses = append(r.Misses, b.String())
}

func isLinkKind(k string) bool {
	return k == matrix.KindLink || k == matrix.KindCable || k == matrix.KindSwitch
}

// pick chooses the kind's random victims.
// Victims are on planes below planes: see fitPlanes.
func pick(t *topology.Topology, rng *rand.Rand, k Kind, planes int) []injected {
	n := 1
	if k.Double {
		n = 2
	}
	var out []injected
	used := map[string]bool{}
	for len(out) < n {
		f := pickOne(t, rng, k, planes)
		if !used[f.spec] {
			used[f.spec] = true
			out = append(out, f)
		}
	}
	return out
}

func pickOne(t *topology.Topology, rng *rand.Rand, k Kind, planes int) injected {
	switch k.Target {
	case "switch":
		var sw []int
		for i, s := range t.Switches {
			if s.Tier > topology.Leaf && s.Plane < planes {
				sw = append(sw, i)
			}
		}
		name := t.Switches[sw[rng.IntN(len(sw))]].Name
		return injected{spec: "switch=" + name + ":" + k.Effect,
			want: func(s *matrix.Suspect) bool { return s.Kind == matrix.KindSwitch && s.Switch == name }}
	case "host":
		var hcas []int
		for h, x := range t.HCAs {
			if x.Rail < planes {
				hcas = append(hcas, h)
			}
		}
		h := hcas[rng.IntN(len(hcas))]
		c := t.Cables[t.HCACable(h)]
		a, b := t.EndName(c.A), t.EndName(c.B)
		x := t.HCAs[h]
		return injected{spec: "cable=" + a + "~" + b + ":" + k.Effect,
			want: func(s *matrix.Suspect) bool {
				return (s.Kind == matrix.KindCable || s.Kind == matrix.KindHCA) && s.Node == x.Node && s.Rail == x.Rail
			}}
	}
	var links []int
	for i, c := range t.Cables {
		if !c.A.IsHCA() && !c.B.IsHCA() && t.Switches[c.A.Switch].Plane < planes {
			links = append(links, i)
		}
	}
	c := t.Cables[links[rng.IntN(len(links))]]
	a, b := t.EndName(c.A), t.EndName(c.B)
	if k.Target == "oneway" {
		if rng.IntN(2) == 0 {
			a, b = b, a
		}
		return injected{spec: "cable=" + a + ">" + b + ":" + k.Effect,
			want: func(s *matrix.Suspect) bool {
				return s.Kind == matrix.KindLink && s.Direction == "one-way" && len(s.Ends) == 2 && s.Ends[0] == a && s.Ends[1] == b
			}}
	}
	return injected{spec: "cable=" + a + "~" + b + ":" + k.Effect,
		want: func(s *matrix.Suspect) bool {
			return s.Kind == matrix.KindLink && len(s.Ends) == 2 &&
				(s.Ends[0] == a && s.Ends[1] == b || s.Ends[0] == b && s.Ends[1] == a)
		}}
}

// railOf is the plane a fault's first named switch serves.
func railOf(t *topology.Topology, spec string) int {
	_, rest, _ := strings.Cut(spec, "=")
	name := rest
	if i := strings.IndexAny(name, ":~>/"); i >= 0 {
		name = name[:i]
	}
	if s, ok := t.Switch(name); ok {
		return max(t.Switches[s].Plane, 0)
	}
	// An HCA end first: node/device; the device's rail is its number.
	if _, dev, ok := strings.Cut(strings.SplitN(rest, "~", 2)[0], "/"); ok {
		for h := range t.HCAs {
			if t.HCAs[h].Device == dev {
				return t.HCAs[h].Rail
			}
		}
	}
	return 0
}
