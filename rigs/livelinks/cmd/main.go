// Command cmd is `make bench-live-links`: the live link watch on a
// simulated fat tree (rigs/livelinks). It prints how soon random cables
// that start dropping packets are named, and a long run's footprint with
// a flapping cable.
//
//	-tree      the fat tree (topology.GenerateFatTree's spec)
//	-runs      faults injected one at a time, each at a random moment
//	-effect    what each fault does (a sim cable effect: loss=2%, down)
//	-oneway    each fault on one direction of its cable only
//	-soak      windows of the long run (0: none), -soak-tree its fabric
//	-limit-mb  the run stops itself when its RSS passes this (< 16 GB)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/liveplan"
	"github.com/rdmamesh/rdmamesh/internal/testkit/procstat"
	"github.com/rdmamesh/rdmamesh/rigs/livelinks"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench-live-links", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tree := fs.String("tree", "nodes=4096,rails=8,leaf=32,spines=16,pods=8,cores=256", "the fat tree of the onset runs")
	runs := fs.Int("runs", 40, "faults injected one at a time")
	effect := fs.String("effect", "loss=2%", "what each fault does to its cable")
	oneWay := fs.Bool("oneway", false, "faults act on one direction of their cable only")
	soak := fs.Int("soak", 2000, "windows of the long run with a flapping cable (0: none)")
	soakTree := fs.String("soak-tree", "nodes=1024,rails=8,leaf=32,spines=16", "the fat tree of the long run")
	limit := fs.Int("limit-mb", 14336, "stop when the run's RSS passes this many MB (1..15258)")
	seed := fs.Uint64("seed", 1, "random seed")
	rate := fs.Float64("rate", 0, "live.rate_per_hca (0: the default)")
	linkRate := fs.Float64("link-rate", 0, "live.link_rate (0: the default)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *limit < 1 || *limit > 15258 {
		fmt.Fprintf(stderr, "bench-live-links: -limit-mb %d: want 1..15258 (the guard stays below 16 GB)\n", *limit)
		return 2
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := &procstat.Guard{Limit: uint64(*limit) << 20, Name: "bench-live-links"}
	stop := g.Start(ctx, func(err error) {
		fmt.Fprintln(stderr, err)
		os.Exit(4)
	})
	defer func() { _, _ = stop() }()
	if *runs > 0 {
		params := liveplan.Params{RatePerHCA: *rate, LinkRate: *linkRate}
		if err := onset(stdout, livelinks.Config{Tree: *tree, Seed: *seed, Params: params}, *runs, *effect, *oneWay); err != nil {
			fmt.Fprintln(stderr, "bench-live-links:", err)
			return 1
		}
	}
	if *soak > 0 {
		t0 := time.Now()
		f, err := livelinks.NewFleet(livelinks.Config{Tree: *soakTree, Seed: *seed, Params: liveplan.Params{RatePerHCA: *rate, LinkRate: *linkRate}})
		if err != nil {
			fmt.Fprintln(stderr, "bench-live-links:", err)
			return 1
		}
		res, err := livelinks.Soak(f, *soak, 100, 4, *seed)
		if err != nil {
			fmt.Fprintln(stderr, "bench-live-links:", err)
			return 1
		}
		fmt.Fprintf(stdout, "soak on %s (%d link flows, 10 s windows, time accelerated): %s; %v wall\n", *soakTree, f.Flows(), res, time.Since(t0).Round(time.Second))
		if res.Opened != res.Spells || len(res.Wrong) > 0 {
			fmt.Fprintf(stdout, "FAIL: each spell should be one episode and nothing else named\n")
			return 1
		}
	}
	fmt.Fprintf(stdout, "peak RSS %s\n", procstat.MB(g.Peak()))
	return 0
}

func onset(w io.Writer, cfg livelinks.Config, runs int, effect string, oneWay bool) error {
	t0 := time.Now()
	f, err := livelinks.NewFleet(cfg)
	if err != nil {
		return err
	}
	planned := time.Since(t0)
	res, err := livelinks.Onset(f, runs, effect, oneWay, cfg.Seed)
	if err != nil {
		return err
	}
	d := slices.Clone(res.Delays)
	slices.Sort(d)
	p50, worst := 0.0, 0.0
	if len(d) > 0 {
		p50, worst = d[len(d)/2], d[len(d)-1]
	}
	fmt.Fprintf(w, "onset on %s: %d link flows (slowest %.1f probes/s), %d switch cables, planned in %v\n",
		cfg.Tree, f.Flows(), f.Cov.MinLinkRate, len(f.SwitchCables()), planned.Round(time.Millisecond))
	how := "both ways"
	if oneWay {
		how = "one way"
	}
	fmt.Fprintf(w, "%s %s on a random switch cable at a random moment: named %d of %d (first and alone), onset to judgement p50 %.1f s, worst %.1f s; other cables named %d; missed %v; %v wall\n",
		effect, how, res.Named, res.Faults, p50, worst, len(res.Wrong), res.Missed, time.Since(t0).Round(time.Second))
	if len(res.Wrong) > 0 {
		fmt.Fprintf(w, "named though clean: %v\n", res.Wrong[:min(len(res.Wrong), 10)])
	}
	if res.Named < res.Faults || len(res.Wrong) > 0 || worst > 30 {
		return errors.New("FAIL: every fault should be named within 30 s, and nothing else")
	}
	return nil
}
