package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmamesh/rdmamesh/cluster"
	"github.com/rdmamesh/rdmamesh/gate"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/config"
	"github.com/rdmamesh/rdmamesh/topology"
)

func newDemoCmd() *cobra.Command {
	d := config.Defaults()
	var once bool
	var jsonFile, junitFile, preset, tree string
	var inject []string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Coordinator + simulated workers in one process, with the web UI: no RDMA hardware needed",
		Example: "  rdmamesh demo --nodes 16\n" +
			"  rdmamesh demo --nodes 16 --once --fault node-03/mlx5_1:down --json out.json\n" +
			"  rdmamesh demo --nodes 32 --inject 30s=node-05/mlx5_0:loss=5% --inject 3m=heal\n" +
			"  rdmamesh demo --fat-tree nodes=64,rails=2,leaf=8,spines=4 --once --fault cable=leaf-r0-01:10~spine-r0-01:3:loss=2%\n" +
			"  rdmamesh demo --fat-tree nodes=16,rails=2,leaf=4,spines=2,addrs=10.255.0.0/24 --miscable move=node-03/mlx5_0>leaf-r0-01:9",
		Args: cobra.NoArgs,
	}
	f := cmd.Flags()
	f.Int("nodes", d["demo.nodes"].(int), "simulated nodes")
	f.Int("rails", d["demo.rails"].(int), "rails (HCAs) per node")
	f.StringVar(&preset, "preset", "", "sim preset: roce-2x100 or ib-8x400 (default: by --rails)")
	f.StringSlice("fault", nil, "fault spec, repeatable: node-03/mlx5_1:down, node-05~node-09:loss=30%, node-07:bw=0.4, node-02:lat=5x, node-04:dead")
	f.String("listen", d["demo.listen"].(string), "web UI listen host:port (port 0 picks one)")
	f.Int64("seed", d["sim.seed"].(int64), "sim seed")
	f.Float64("time-scale", d["sim.time_scale"].(float64), "1 = tests take modelled time, 0 = instant")
	f.String("mode", d["sweep.mode"].(string), "sweep mode: quick or full")
	f.String("pattern", d["sweep.pattern"].(string), "sweep pattern: all-pairs, links or fabric (links and fabric need --fat-tree or --topology)")
	f.Duration("pair-timeout", d["coordinator.pair_timeout"].(time.Duration), "deadline for one directional pair test")
	f.BoolVar(&once, "once", false, "run one sweep, print the summary and exit with the gate's code")
	f.StringVar(&jsonFile, "json", "", "with --once: write the matrix JSON here")
	f.StringVar(&junitFile, "junit", "", "with --once: write JUnit XML here")
	f.StringVar(&tree, "fat-tree", "", "run on a generated rail-optimized fat tree (rdmamesh topology generate's syntax, e.g. nodes=64,rails=2,leaf=8,spines=4): sets the nodes and rails, routes every test over it and allows cable=/switch= faults")
	f.String("topology", "", "run on this cabling plan or ibnetdiscover output (its nodes must be node-01 ... node-N)")
	f.StringArray("miscable", nil, "with --fat-tree or --topology: a cable that differs from the plan, repeatable: swap=NODE/DEV,NODE/DEV, move=NODE/DEV>SWITCH:PORT, uplink=SWITCH:PORT>SWITCH:PORT, missing=NODE/DEV or missing=SWITCH:PORT; the coordinator judges against the plan (GET /api/v1/cabling, the UI's Cabling view)")
	f.StringArrayVar(&inject, "inject", nil, "break the running demo: AFTER=FAULT (same syntax as --fault) or AFTER=heal, repeatable; e.g. 30s=node-05/mlx5_0:loss=5%")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := loadConfig(cmd, map[string]string{"nodes": "demo.nodes", "rails": "demo.rails",
			"fault": "sim.faults", "listen": "demo.listen", "seed": "sim.seed", "time-scale": "sim.time_scale",
			"mode": "sweep.mode", "pattern": "sweep.pattern", "pair-timeout": "coordinator.pair_timeout", "topology": "coordinator.topology", "miscable": "sim.miscabled"})
		if err != nil {
			return err
		}
		topo, err := demoTopology(cmd, c, tree, &preset)
		if err != nil {
			return err
		}
		injections, err := parseInjections(inject)
		if err != nil {
			return err
		}
		if preset == "" {
			preset = "roce-2x100"
			if c.Demo.Rails > 2 {
				preset = "ib-8x400"
			}
		}
		log := newLogger(c, cmd.ErrOrStderr())
		if once && c.Log.Level == "info" {
			log = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
		}
		descriptorBudget(log, "demo", demoDescriptors(c.Demo.Nodes))
		if err := memoryBudget(log, c, "demo"); err != nil {
			return err
		}
		if !config.Loopback(c.Demo.Listen) {
			// Simulated HCAs only, so no refusal; but the demo has no token.
			log.Warn("demo.listen is reachable beyond loopback and the demo has no token: anyone who reaches it can start sweeps",
				"listen", c.Demo.Listen)
		}
		return runDemo(cmd.Context(), c, preset, demoOut{once: once, json: jsonFile, junit: junitFile, inject: injections, topo: topo},
			cmd.OutOrStdout(), cmd.ErrOrStderr(), log)
	}
	return cmd
}

type demoOut struct {
	once        bool
	json, junit string
	inject      []injection
	topo        *topology.Topology
}

func runDemo(ctx context.Context, c *config.Config, preset string, o demoOut, stdout, stderr io.Writer, log *slog.Logger) error {
	defaults, err := sweepDefaults(c)
	if err != nil {
		return err
	}
	start := time.Now()
	startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	cl, err := cluster.Start(startCtx, cluster.Options{Nodes: c.Demo.Nodes, Rails: c.Demo.Rails, Preset: preset,
		Seed: c.Sim.Seed, Faults: c.Sim.Faults, TimeScale: c.Sim.TimeScale, Listen: c.Demo.Listen,
		Mode: c.Sweep.Mode, Params: testParams(c), PairTimeout: c.Coordinator.PairTimeout, Logger: log, Sweep: defaults,
		Version: version, Commit: commit, Live: liveOptions(c), Topology: o.topo, LossProbes: c.Coordinator.TraceLossProbes,
		Miscabled: c.Sim.Miscabled})
	cancel()
	if err != nil {
		return err
	}
	defer cl.Stop()
	if len(o.inject) > 0 {
		stdout = &lockedWriter{w: stdout}
		injCtx, stopInj := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { // stopped and awaited before the cluster stops
			defer close(done)
			runInjections(injCtx, cl, start, o.inject, stdout)
		}()
		defer func() { stopInj(); <-done }()
	}
	fmt.Fprintf(stdout, "rdmamesh demo: %d simulated nodes x %d rails (%s) up in %s\n", c.Demo.Nodes, c.Demo.Rails,
		preset, time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(stdout, "web UI: %s/\n", cl.URL)
	sweepStart := time.Now()
	code := gate.Run(ctx, gate.Options{Coordinator: cl.URL, JSONFile: o.json, JUnitFile: o.junit,
		Poll: 50 * time.Millisecond, Request: api.SweepRequest{Mode: c.Sweep.Mode, Pattern: c.Sweep.Pattern}}, stdout, stderr)
	fmt.Fprintf(stdout, "sweep wall time: %s\n", time.Since(sweepStart).Round(time.Millisecond))
	if o.once {
		if code != 0 {
			return exitCode(code)
		}
		return nil
	}
	fmt.Fprintf(stdout, "serving %s/ — start more sweeps from the UI; Ctrl-C to stop\n", cl.URL)
	<-ctx.Done()
	return nil
}

// demoTopology builds the demo's fabric model from --fat-tree or
// coordinator.topology: a fat tree sizes the demo (nodes, rails) and
// picks a preset of its link layer when none was given.
func demoTopology(cmd *cobra.Command, c *config.Config, tree string, preset *string) (*topology.Topology, error) {
	if tree == "" {
		return loadTopology(c.Coordinator.Topology)
	}
	if c.Coordinator.Topology != "" {
		return nil, fmt.Errorf("--fat-tree and --topology (coordinator.topology) both given: pick one")
	}
	t, err := fatTree(tree)
	if err != nil {
		return nil, err
	}
	nodes, rails := len(t.HCAs), 0
	for _, h := range t.HCAs {
		rails = max(rails, h.Rail+1)
	}
	nodes /= rails
	for _, fl := range []struct {
		name string
		have int
	}{{"nodes", c.Demo.Nodes}, {"rails", c.Demo.Rails}} {
		want := map[string]int{"nodes": nodes, "rails": rails}[fl.name]
		if cmd.Flags().Changed(fl.name) && fl.have != want {
			return nil, fmt.Errorf("--%s %d disagrees with --fat-tree's %d; leave --%s out", fl.name, fl.have, want, fl.name)
		}
	}
	c.Demo.Nodes, c.Demo.Rails = nodes, rails
	if *preset == "" {
		switch {
		case t.LinkLayer == topology.InfiniBand:
			*preset = "ib-8x400"
		case rails <= 2:
			*preset = "roce-2x100"
		default:
			*preset = "roce-8x400"
		}
	}
	return t, nil
}
