// Command cmd is `make bench`: it runs the scale harness (rigs/scale)
// for each node count, each run in a child process of its own so that one
// run's memory never shows in another's RSS, and prints a Markdown table.
//
//	BENCH_NODES=128,256,1024,2048,4096  node counts
//	BENCH_RUNS=1              runs per count; the table shows medians
//	BENCH_ITERS=0             latency iterations per cell (0 = default)
//	BENCH_PAYLOAD=1           stream the matrix JSON to measure it
//	BENCH_PAYLOAD_MAX=1024    largest node count whose JSON is streamed (81 s
//	                          at 1,024; 16x that at 4,096)
//	BENCH_MODE=both           full (sim workers run every test), control
//	                          (tasks answered at once: the coordinator alone)
//	                          or both
//	BENCH_FULL_MAX=256        largest node count run in full mode (a full
//	                          1,024-node run takes tens of minutes here)
//	BENCH_TRANSPORT=inproc    the worker API in-process, or over real
//	                          loopback TCP (tcp): what each task's HTTP
//	                          request costs both ends, stand-ins included
//	BENCH_PPROF=dir           write CPU and heap profiles of each run there
//	BENCH_PPROF_SCOPE=run     the CPU profile covers the whole run (setup,
//	                          gossip, post-sweep snapshot) or only the
//	                          timed sweep (sweep)
//	BENCH_READER=0            > 0 (e.g. 1s): a reader asks for the running
//	                          sweep's matrix this often, as an open UI does
//	BENCH_RSS_LIMIT_MB=14336  a run whose RSS passes this stops itself
//	                          (exit 4) before it can take the machine down;
//	                          1..15258 (the guard stays on, below 16 GB)
//	BENCH_PATTERN=all-pairs   the sweep's pattern: links and fabric plan on
//	                          BENCH_TREE
//	BENCH_TREE=               a fat tree laid over the workers (their names,
//	                          the preset's rails and link layer):
//	                          leaf=32,spines=16[,pods=32,cores=256]
//	BENCH_MEMORY_LIMIT=auto   the Go soft memory limit, chosen as the
//	                          coordinator's coordinator.memory_limit is
//	                          (auto: GOMEMLIMIT, else 90% of the cgroup
//	                          limit, else none; off; 5GiB; 80%)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/selffault"
	"github.com/rdmamesh/rdmamesh/rigs/scale"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nodes := fs.String("nodes", env("BENCH_NODES", "128,256,1024,2048,4096"), "comma-separated node counts")
	runs := fs.Int("runs", envInt("BENCH_RUNS", 1), "runs per node count (the table shows medians)")
	iters := fs.Int("iters", envInt("BENCH_ITERS", 0), "latency iterations per cell; 0 = the default")
	payload := fs.Bool("payload", envInt("BENCH_PAYLOAD", 1) != 0, "measure the matrix JSON payload")
	payloadMax := fs.Int("payload-max", envInt("BENCH_PAYLOAD_MAX", 1024), "largest node count whose matrix JSON is measured")
	prof := fs.String("pprof", env("BENCH_PPROF", ""), "directory for CPU and heap profiles")
	scope := fs.String("pprof-scope", env("BENCH_PPROF_SCOPE", "run"), "what the CPU profile covers: run or sweep")
	reader := fs.Duration("reader", envDuration("BENCH_READER", 0), "poll the running sweep's matrix this often (0 = no reader)")
	mode := fs.String("mode", env("BENCH_MODE", "both"), "full, control or both")
	transport := fs.String("transport", env("BENCH_TRANSPORT", "inproc"), "the worker API in-process (inproc) or over loopback TCP (tcp)")
	fullMax := fs.Int("full-max", envInt("BENCH_FULL_MAX", 256), "largest node count run in full mode")
	child := fs.Int("child", 0, "internal: run once with this many nodes and print JSON")
	control := fs.Bool("control", false, "internal: the child runs in control mode")
	verbose := fs.Bool("v", env("BENCH_VERBOSE", "") != "", "log progress to stderr")
	pattern := fs.String("pattern", env("BENCH_PATTERN", ""), "the sweep's pattern (all-pairs; links and fabric need a tree)")
	tree := fs.String("tree", env("BENCH_TREE", ""), "a fat tree over the workers: leaf=32,spines=16[,pods=32,cores=256]")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *transport != "inproc" && *transport != "tcp" {
		fmt.Fprintf(stderr, "bench: BENCH_TRANSPORT=%q: want inproc (in-process) or tcp (loopback TCP)\n", *transport)
		return 2
	}
	if *scope != "run" && *scope != "sweep" {
		fmt.Fprintf(stderr, "bench: BENCH_PPROF_SCOPE=%q: want run (the whole child) or sweep (the timed sweep alone)\n", *scope)
		return 2
	}
	limit, err := scale.RSSLimit(os.Getenv("BENCH_RSS_LIMIT_MB"))
	if err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 2
	}
	memLimit := env("BENCH_MEMORY_LIMIT", "auto")
	if err := selffault.ParseMemoryLimit(memLimit); err != nil {
		fmt.Fprintln(stderr, "bench: BENCH_MEMORY_LIMIT:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *child > 0 {
		// The table splits the held heap between the FSM and the matrix
		// from the heap profile (scale.heapBy); at the default 512 KB
		// sampling a 1 KB grid block is sampled one time in 500, a few
		// per cent of error. 64 KB keeps it under 1% for a few thousand
		// sampled stacks more per GB allocated.
		runtime.MemProfileRate = 64 << 10
		ml, err := selffault.ChooseMemoryLimit("BENCH_MEMORY_LIMIT", memLimit, os.Getenv("GOMEMLIMIT"), os.DirFS("/"))
		if err != nil {
			fmt.Fprintln(stderr, "bench: BENCH_MEMORY_LIMIT:", err)
			return 2
		}
		ml.Apply()
		return runChild(ctx, scale.Config{Nodes: *child, Control: *control, LatencyIters: *iters, Payload: *payload, Reader: *reader,
			TCP: *transport == "tcp", Pattern: *pattern, Tree: *tree}, profile{*prof, *scope == "sweep"}, *verbose, limit, stdout, stderr)
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 1
	}
	var modes []bool
	switch *mode {
	case "full":
		modes = []bool{false}
	case "control":
		modes = []bool{true}
	case "both":
		modes = []bool{true, false}
	default:
		fmt.Fprintf(stderr, "bench: mode %q: want full, control or both\n", *mode)
		return 2
	}
	var (
		table  []scale.Result
		failed error
	)
	// A failed run (the memory guard's exit 4, say) ends the bench, but
	// the rows already measured are still printed.
sizes:
	for _, f := range strings.Split(*nodes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			fmt.Fprintf(stderr, "bench: node count %q: want an integer >= 2\n", f)
			return 2
		}
		for _, ctl := range modes {
			if !ctl && n > *fullMax {
				fmt.Fprintf(stderr, "bench: %d nodes: full mode skipped (BENCH_FULL_MAX=%d)\n", n, *fullMax)
				continue
			}
			var rs []scale.Result
			for i := 0; i < max(*runs, 1); i++ {
				fmt.Fprintf(stderr, "bench: %d nodes, control=%v, run %d/%d\n", n, ctl, i+1, max(*runs, 1))
				cmd := exec.CommandContext(ctx, self, "-child", strconv.Itoa(n), "-control="+strconv.FormatBool(ctl), "-iters", strconv.Itoa(*iters),
					"-payload="+strconv.FormatBool(*payload && n <= *payloadMax), "-pprof", *prof, "-pprof-scope", *scope, "-transport", *transport, "-v="+strconv.FormatBool(*verbose), "-reader", reader.String(),
					"-pattern", *pattern, "-tree", *tree)
				cmd.Stderr = stderr
				out, err := cmd.Output()
				var r scale.Result
				if err == nil {
					if err = json.Unmarshal(out, &r); err != nil {
						err = fmt.Errorf("bad child output: %w", err)
					}
				}
				if err != nil {
					failed = fmt.Errorf("%d nodes, control=%v: %w", n, ctl, err)
					fmt.Fprintln(stderr, "bench:", failed)
					if len(rs) > 0 {
						table = append(table, scale.Median(rs))
					}
					break sizes
				}
				// Rounds' overhead summed, and the rest of the sweep's wall:
				// planning before the first round, the analysis after the last.
				// Steal: what the hypervisor took from the machine meanwhile,
				// which makes a run slow for reasons not its own.
				fmt.Fprintf(stderr, "bench: %d nodes: sweep %.1f s (rounds %.1f s, the rest %.1f s), overhead p50 %.2f ms (dispatch p50 %.2f ms, commit p50 %.2f ms), host steal %.1f s\n",
					n, r.Sweep.Seconds(), r.Overhead.Sum.Seconds(), (r.Sweep - r.Overhead.Sum).Seconds(),
					float64(r.Overhead.Median)/1e6, float64(r.Dispatch.Median)/1e6, float64(r.Commit.Median)/1e6, r.Steal.Seconds())
				rs = append(rs, r)
			}
			table = append(table, scale.Median(rs))
		}
	}
	if len(table) == 0 {
		if failed != nil {
			return 1
		}
		fmt.Fprintln(stderr, "bench: nothing ran (see BENCH_FULL_MAX)")
		return 2
	}
	fmt.Fprintf(stdout, "quick sweep, sim preset ib-8x400, %d latency iterations per cell, medians of %d run(s); "+
		"full = simulated workers run every test in this process, control = tasks answered at once (coordinator alone)\n\n",
		table[0].LatencyIters, max(*runs, 1))
	scale.Table(stdout, table)
	if failed != nil {
		fmt.Fprintf(stdout, "\nstopped early: %v\n", failed)
		return 1
	}
	return 0
}

// profile is where a child writes its profiles, and whether its CPU
// profile covers the timed sweep alone.
type profile struct {
	dir   string
	sweep bool
}

func runChild(ctx context.Context, cfg scale.Config, prof profile, verbose bool, limit uint64, stdout, stderr io.Writer) int {
	n, control := cfg.Nodes, cfg.Control
	guardCtx, stopGuard := context.WithCancel(ctx)
	defer stopGuard()
	go scale.GuardRSS(guardCtx, limit, 250*time.Millisecond, stderr, os.Exit)
	log := slog.New(slog.DiscardHandler)
	if verbose {
		log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	var sweepProfile io.Writer
	if prof.dir != "" {
		if err := os.MkdirAll(prof.dir, 0o755); err != nil {
			fmt.Fprintln(stderr, "bench:", err)
			return 1
		}
		f, err := os.Create(filepath.Join(prof.dir, fmt.Sprintf("cpu-%d%s.pprof", n, suffix(control))))
		if err != nil {
			fmt.Fprintln(stderr, "bench:", err)
			return 1
		}
		defer f.Close()
		if prof.sweep {
			sweepProfile = f
		} else {
			if err := pprof.StartCPUProfile(f); err != nil {
				fmt.Fprintln(stderr, "bench:", err)
				return 1
			}
			defer pprof.StopCPUProfile()
		}
	}
	cfg.Logger, cfg.HeapProfile, cfg.SweepProfile, cfg.Labels = log, heapPath(prof.dir, n, control), sweepProfile, prof.dir != ""
	r, err := scale.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %d nodes: %v\n", n, err)
		return 1
	}
	if l := debug.SetMemoryLimit(-1); l < math.MaxInt64 {
		r.MemoryLimit = uint64(l)
	}
	_ = json.NewEncoder(stdout).Encode(r)
	return 0
}

func heapPath(dir string, n int, control bool) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, fmt.Sprintf("heap-%d%s.pprof", n, suffix(control)))
}

func suffix(control bool) string {
	if control {
		return "-control"
	}
	return ""
}

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func envInt(k string, def int) int {
	v, err := strconv.Atoi(os.Getenv(k))
	if err != nil {
		return def
	}
	return v
}

func envDuration(k string, def time.Duration) time.Duration {
	v := os.Getenv(k)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		fmt.Fprintf(os.Stderr, "bench: %s=%q is not a duration (e.g. 1s, 500ms)\n", k, v)
		os.Exit(2)
	}
	return d
}
