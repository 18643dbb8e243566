// Command links prints the link localization table (make bench-links).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/testkit/procstat"
	"github.com/rdmamesh/rdmamesh/rigs/links"
)

func main() {
	tree := flag.String("tree", "nodes=512,rails=8,leaf=32,spines=16", "fat tree (rdmamesh topology generate syntax)")
	preset := flag.String("preset", "roce-8x400", "simulated node type, with the tree's rails")
	runs := flag.Int("runs", 20, "runs per fault type")
	seed := flag.Int64("seed", 1, "first seed")
	verbose := flag.Bool("v", false, "print the faults and first suspects of every run that missed")
	pattern := flag.String("pattern", "", "what each run measures: every ordered pair of the faulted planes (\"\") or a fabric sweep's cells (fabric)")
	maxHeap := flag.Float64("max-heap-gb", links.DefaultMaxHeap/1e9, "stop a run before the heap passes this many GB (at most the default: the machine is shared)")
	flag.Parse()
	if !(*maxHeap > 0 && *maxHeap <= links.DefaultMaxHeap/1e9) {
		fmt.Fprintf(os.Stderr, "links: -max-heap-gb %g: want more than 0 and at most %g\n", *maxHeap, links.DefaultMaxHeap/1e9)
		os.Exit(2)
	}
	// The guard counts garbage too (it collects before giving up); a
	// memory limit has the collector take it back before the heap nears
	// the limit, instead of at twice the last live heap.
	debug.SetMemoryLimit(int64(*maxHeap * 1e9))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := links.Config{Tree: *tree, Preset: *preset, Runs: *runs, Seed: *seed, Params: Params(), MaxHeap: uint64(*maxHeap * 1e9), Pattern: *pattern}
	start := time.Now()
	heap := procstat.StartHeapSampler(100 * time.Millisecond)
	rows, err := links.Measure(ctx, cfg, links.Kinds())
	if err != nil {
		fmt.Fprintln(os.Stderr, "links:", err)
		os.Exit(1)
	}
	links.Write(os.Stdout, cfg, rows)
	if *verbose {
		for _, r := range rows {
			for _, m := range r.Misses {
				fmt.Printf("%s: %s\n", r.Name, m)
			}
		}
	}
	fmt.Printf("wall %.1f s, peak heap %.2f GB\n", time.Since(start).Seconds(), float64(heap.Stop())/1e9)
}

// Params are a short test: enough iterations for a p50 and a bandwidth,
// few enough that a quarter of a million cells a run stay quick.
func Params() probe.TestParams {
	return probe.TestParams{LatencySize: 8, LatencyIters: 50, Warmup: 5, BWSize: 65536, BWIters: 20, TxDepth: 16, Timeout: 5 * time.Second}
}
