// Command judge prints how well the matrix judges the simulated fabric:
// per preset, per fault class and strength, the share of runs whose
// exclude list named the broken node and the share that named a healthy
// one (rigs/judge). `make bench-judge` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/rigs/judge"
)

func main() {
	presets := flag.String("presets", "rxe-lab:16,ib-8x400:8", "PRESET:NODES,... to measure")
	runs := flag.Int("runs", 200, "runs per case")
	retests := flag.Int("retests", 2, "confirmation passes (sweep.retests)")
	seed := flag.Int64("seed", 1, "first seed")
	flag.Parse()
	p := probe.DefaultTestParams()
	p.LatencyIters, p.BWIters = 200, 50 // the figures' noise comes from the preset, not from few samples
	for _, pn := range strings.Split(*presets, ",") {
		var cfg judge.Config
		name, nodes, ok := strings.Cut(pn, ":")
		if _, err := fmt.Sscan(nodes, &cfg.Nodes); !ok || err != nil || cfg.Nodes < 2 {
			fmt.Fprintf(os.Stderr, "judge: -presets %q: want PRESET:NODES with at least 2 nodes, e.g. rxe-lab:16\n", pn)
			os.Exit(2)
		}
		cfg.Preset, cfg.Runs, cfg.Retests, cfg.Seed, cfg.Params = name, *runs, *retests, *seed, p
		start := time.Now()
		rows, err := judge.Measure(context.Background(), cfg, judge.Cases())
		if err != nil {
			fmt.Fprintf(os.Stderr, "judge: %s: %v\n", name, err)
			os.Exit(1)
		}
		judge.Write(os.Stdout, cfg, rows)
		fmt.Printf("(%s)\n", time.Since(start).Round(time.Second))
	}
}
