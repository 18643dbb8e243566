// Command cabling prints the cabling conformance rig's tally: a
// generated fat tree, random miscablings, cabling.Check's verdicts.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/testkit/procstat"
	"github.com/rdmamesh/rdmamesh/rigs/cabling"
)

func main() {
	tree := flag.String("tree", "nodes=16384,rails=8,leaf=32,spines=16,pods=16,cores=32", "fat tree (rdmamesh topology generate syntax)")
	runs := flag.Int("runs", 5, "faulted runs (each injects one fault of every kind)")
	clean := flag.Int("clean", 20, "clean runs, which must name nothing")
	seed := flag.Int64("seed", 1, "seed")
	ports := flag.String("ports", "swp", "how switches name ports: swp (swp33) or sonic (Ethernet128 for port 33)")
	verbose := flag.Bool("v", false, "print every wrong, missed and false finding")
	maxHeap := flag.Float64("max-heap-gb", cabling.DefaultMaxHeap/1e9, "stop before the heap passes this many GB (at most the default: the machine is shared)")
	flag.Parse()
	if !(*maxHeap > 0 && *maxHeap <= cabling.DefaultMaxHeap/1e9) {
		fmt.Fprintf(os.Stderr, "cabling: -max-heap-gb %g: want more than 0 and at most %g\n", *maxHeap, cabling.DefaultMaxHeap/1e9)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := cabling.Config{Tree: *tree, Runs: *runs, CleanRuns: *clean, Seed: *seed, Ports: *ports, MaxHeap: uint64(*maxHeap * 1e9)}
	start := time.Now()
	heap := procstat.StartHeapSampler(100 * time.Millisecond)
	res, err := cabling.Measure(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cabling:", err)
		os.Exit(1)
	}
	cabling.Write(os.Stdout, cfg, res)
	if *verbose {
		for _, m := range res.Misses {
			fmt.Println(m)
		}
	}
	fmt.Printf("wall %.1f s, peak heap %.2f GB\n", time.Since(start).Seconds(), float64(heap.Stop())/1e9)
	if res.Wrong+res.Missed+res.False > 0 {
		os.Exit(1)
	}
}
