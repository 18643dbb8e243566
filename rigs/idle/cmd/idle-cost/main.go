// Command idle-cost is `make idle-cost`: it measures one idle rdmamesh
// worker's CPU and memory in gossip pools of several sizes (package
// rigs/idle) and prints a Markdown table.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rdmamesh/rdmamesh/rigs/idle"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("idle-cost", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bin := fs.String("bin", "bin/rdmamesh", "the rdmamesh binary whose worker is measured")
	members := fs.String("members", "1024,128,3", "pool sizes, the worker included, comma-separated")
	keys := fs.String("keys", "off,on", "gossip key off, on or both (off,on)")
	window := fs.Duration("window", 0, "measurement window; 0 = one push/pull interval of the pool's size, at least 1m")
	compress := fs.Bool("peer-compression", false, "the peers compress their gossip (LAN's default; slower to form a large pool)")
	memMB := fs.Uint64("mem-limit-mb", idle.DefaultRSSLimit>>20, "stop a run once this process and the worker hold more resident memory (MB)")
	live := fs.Bool("live", false, "give the worker a live plan for the pool (the always-on mesh at the shipped rates) before measuring")
	wait := fs.Duration("wait", 15*time.Minute, "give up a run when the pool or the worker has not settled within this")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	sizes, err := parseSizes(*members)
	if err != nil {
		fmt.Fprintf(stderr, "idle-cost: -members: %v\n", err)
		return 2
	}
	var withKey []bool
	for _, k := range strings.Split(*keys, ",") {
		switch strings.TrimSpace(k) {
		case "off":
			withKey = append(withKey, false)
		case "on":
			withKey = append(withKey, true)
		default:
			fmt.Fprintf(stderr, "idle-cost: -keys: %q: use off, on or off,on\n", k)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	var rs []idle.Result
	for _, n := range sizes {
		for _, k := range withKey {
			r, err := idle.Run(ctx, idle.Config{Bin: *bin, Members: n, Key: k, PeerCompression: *compress, Window: *window, Live: *live,
				RSSLimit: *memMB << 20, Wait: *wait, Log: stderr})
			if err != nil {
				fmt.Fprintf(stderr, "idle-cost: %d members, key %v: %v\n", n, k, err)
				return 1
			}
			rs = append(rs, r)
			fmt.Fprintf(stderr, "idle %d: worker CPU %.3f%% of a core, RSS max %.1f MB\n", n, 100*r.CPU, float64(r.RSSMax)/(1<<20))
		}
	}
	fmt.Fprintf(stdout, "\nIdle cost of one `%s worker --fabric sim` (LAN gossip profile) in a pool of simulated memberlist peers on loopback; "+
		"targets < %.0f%% of a core and < %d MB (wall time %s)\n\n", *bin, 100*idle.TargetCPU, idle.TargetRSS>>20, time.Since(start).Round(time.Second))
	idle.Table(stdout, rs)
	fmt.Fprintln(stdout)
	idle.Notes(stdout, rs)
	return 0
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			return nil, fmt.Errorf("%q: want pool sizes of 2 or more, e.g. 1024,128,3", f)
		}
		out = append(out, n)
	}
	return out, nil
}
