// Package cabling measures cabling conformance: a generated
// rail-optimized fat tree is observed as a correctly cabled fabric
// would advertise itself over LLDP (each HCA's neighbour, both ends of
// each cable between switches), random miscablings are injected into
// that observation, and cabling.Check must name each with its verdict
// and nothing else. Clean runs must name nothing. It has no production
// code; cmd prints its table.
package cabling

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/rdmamesh/rdmamesh/cabling"
	"github.com/rdmamesh/rdmamesh/internal/testkit/procstat"
	"github.com/rdmamesh/rdmamesh/topology"
)

// DefaultMaxHeap is the heap a run may reach: under the shared
// machine's 16 GB for benchmarks.
const DefaultMaxHeap = 16_000_000_000

// Config of one measurement.
type Config struct {
	Tree      string // topology.ParseFatTree spec
	Runs      int    // faulted runs; each injects one fault of every kind
	CleanRuns int
	Seed      int64
	// Ports is how switches write their ports: "swp" (swp33) or "sonic"
	// (Ethernet128 for port 33: lanes, which the analysis must learn).
	Ports   string
	MaxHeap uint64 // bytes; 0 = DefaultMaxHeap
}

// Result is the tally over all runs.
type Result struct {
	Runs, CleanRuns int
	Faults          int // injected
	Expected        int // findings the faults should give (a swap gives two)
	Right           int // named with the right verdict
	Wrong           int // named with another verdict
	Missed          int // not named
	False           int // findings naming nothing injected
	CleanFalse      int // of False, in clean runs
	Analysis        []time.Duration
	Misses          []string      // one line per wrong, missed or false finding
	Ports           int           // judged per run
	Generate        time.Duration // the tree and its clean observation, once
}

// fabric is the tree and its clean observation, indexed for injection.
type fabric struct {
	topo    *topology.Topology
	clean   cabling.Observed
	host    map[string]int // "node rail" → index into clean.Hosts
	line    map[string]int // "switch port" → index into clean.Switches
	spare   []int          // per switch: the first port no cable uses
	leaves  [][]int        // per plane: its leaves
	uplinks []int          // cables from a leaf up
	name    func(topology.Switch, int) string
}

func portNamer(style string) (func(topology.Switch, int) string, error) {
	switch style {
	case "", "swp":
		return func(_ topology.Switch, p int) string { return fmt.Sprintf("swp%d", p) }, nil
	case "sonic":
		return func(_ topology.Switch, p int) string { return fmt.Sprintf("Ethernet%d", 4*(p-1)) }, nil
	}
	return nil, fmt.Errorf("ports %q: want swp or sonic", style)
}

func build(cfg Config) (*fabric, error) {
	name, err := portNamer(cfg.Ports)
	if err != nil {
		return nil, err
	}
	_, topo, err := topology.GenerateFatTree(cfg.Tree)
	if err != nil {
		return nil, err
	}
	f := &fabric{topo: topo, clean: cabling.Observe(topo, name), name: name,
		host: map[string]int{}, line: map[string]int{}, spare: make([]int, len(topo.Switches))}
	for i, h := range f.clean.Hosts {
		f.host[hostKey(h.Node, h.Rail)] = i
	}
	for i, l := range f.clean.Switches {
		f.line[l.Switch+" "+l.Port] = i
	}
	planes := 0
	for i, c := range topo.Cables {
		for _, e := range []topology.End{c.A, c.B} {
			if !e.IsHCA() {
				f.spare[e.Switch] = max(f.spare[e.Switch], e.Port+1)
			}
		}
		if !c.A.IsHCA() && !c.B.IsHCA() && topo.Switches[c.A.Switch].Tier == topology.Leaf {
			f.uplinks = append(f.uplinks, i)
		}
	}
	for _, s := range topo.Switches {
		planes = max(planes, s.Plane+1)
	}
	f.leaves = make([][]int, planes)
	for i, s := range topo.Switches {
		if s.Tier == topology.Leaf {
			f.leaves[s.Plane] = append(f.leaves[s.Plane], i)
		}
	}
	if len(f.uplinks) == 0 {
		return nil, fmt.Errorf("tree %s has no cables between switches to miscable", cfg.Tree)
	}
	return f, nil
}

func hostKey(node string, rail int) string { return fmt.Sprintf("%s %d", node, rail) }

// Measure runs cfg.Runs faulted and cfg.CleanRuns clean analyses.
func Measure(ctx context.Context, cfg Config) (*Result, error) {
	if err := checkHeap(cfg, 0, "before generating the tree"); err != nil {
		return nil, err
	}
	start := time.Now()
	f, err := build(cfg)
	if err != nil {
		return nil, err
	}
	res := &Result{Generate: time.Since(start)}
	for run := range cfg.Runs + cfg.CleanRuns {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := checkHeap(cfg, 0, fmt.Sprintf("before run %d", run+1)); err != nil {
			return nil, err
		}
		clean := run >= cfg.Runs
		rng := newRand(cfg.Seed, run)
		obs, want := f.clean, map[string]cabling.Verdict{}
		if !clean {
			obs, want, err = f.inject(rng)
			if err != nil {
				return nil, err
			}
			res.Runs++
			res.Faults += len(Kinds)
			res.Expected += len(want)
		} else {
			res.CleanRuns++
		}
		start := time.Now()
		rep := checkOnce(f, obs)
		res.Analysis = append(res.Analysis, time.Since(start))
		res.Ports = len(rep.Ports)
		res.tally(run, clean, rep, want)
	}
	return res, nil
}

func (r *Result) tally(run int, clean bool, rep *cabling.Report, want map[string]cabling.Verdict) {
	named := map[string]bool{}
	for _, f := range rep.Findings() {
		v, ok := want[f.End]
		named[f.End] = true
		switch {
		case !ok:
			r.False++
			if clean {
				r.CleanFalse++
			}
			r.Misses = append(r.Misses, fmt.Sprintf("run %d: false finding %s %s found %s: %s", run+1, f.End, f.Verdict, f.Found, f.Detail))
		case v == f.Verdict:
			r.Right++
		default:
			r.Wrong++
			r.Misses = append(r.Misses, fmt.Sprintf("run %d: %s is %s, injected %s (found %s)", run+1, f.End, f.Verdict, v, f.Found))
		}
	}
	ends := make([]string, 0, len(want))
	for e := range want {
		ends = append(ends, e)
	}
	slices.Sort(ends)
	for _, e := range ends {
		if !named[e] {
			r.Missed++
			r.Misses = append(r.Misses, fmt.Sprintf("run %d: %s (%s) not named", run+1, e, want[e]))
		}
	}
}

// checkHeap stops a run before the heap, plus what the next step
// allocates, passes the limit: the machine is shared.
func checkHeap(cfg Config, plus uint64, doing string) error {
	limit := cfg.MaxHeap
	if limit == 0 {
		limit = DefaultMaxHeap
	}
	if h := procstat.HeapObjects(); h+plus > limit {
		return fmt.Errorf("%s on %s: the heap would reach %.2f GB, past the %.2f GB limit (Config.MaxHeap, -max-heap-gb); run stopped: analyse a smaller tree",
			doing, cfg.Tree, float64(h+plus)/1e9, float64(limit)/1e9)
	}
	return nil
}

func newRand(seed int64, run int) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), uint64(run))) }

func checkOnce(f *fabric, obs cabling.Observed) *cabling.Report { return cabling.Check(f.topo, obs) }
