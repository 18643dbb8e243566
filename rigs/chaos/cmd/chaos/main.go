// Command chaos runs rdmamesh's multi-process fault scenarios (make chaos).
// See package rigs/chaos.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rdmamesh/rdmamesh/rigs/chaos"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := chaos.Options{Out: stdout}
	fs.StringVar(&o.Bin, "bin", "bin/rdmamesh", "rdmamesh binary under test")
	fs.StringVar(&o.Dir, "dir", "", "work dir for logs and data (default: a new temp dir, removed on success)")
	fs.BoolVar(&o.Keep, "keep", false, "keep the work dir after a passing run")
	fs.IntVar(&o.Workers, "workers", 6, "worker processes (at least 6)")
	fs.IntVar(&o.Trials, "trials", 10, "leader-kill trials in scenario (a)")
	fs.Float64Var(&o.TimeScale, "time-scale", 60, "sim time scale: larger makes each pair test, and so each sweep, longer")
	fs.Int64Var(&o.Seed, "seed", 1, "seed for kill moments, victims and entry coordinators")
	fs.DurationVar(&o.PairTimeout, "pair-timeout", 10*time.Second, "coordinator --pair-timeout")
	fs.StringVar(&o.Scenarios, "scenarios", "abcd", "scenarios to run, in order: a leader kill, b worker kill, c partition, d restart all")
	fs.StringVar(&o.LogLevel, "log-level", "info", "--log-level of every rdmamesh process (their logs are in the work dir)")
	fs.IntVar(&o.Scale, "scale", 0, "run against this many control-mode workers in this process instead of -workers processes (chaos at scale: scenarios a, b, c)")
	memLimit := fs.Uint64("mem-limit-mb", 12<<10, "stop the run (a violation) once this process and its children hold more resident memory, in MB; 0 = no limit")
	if err := fs.Parse(args); err != nil {
		return chaos.ExitSetup
	}
	o.MemLimit = *memLimit << 20
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.Scale > 0 && !set["scenarios"] {
		o.Scenarios = "abc" // (d) restarts worker processes' coordinators: not at scale
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "chaos: unexpected arguments %v\n", fs.Args())
		return chaos.ExitSetup
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal makes Run stop its processes and report; a second one
	// kills the driver at once, and the kernel (Pdeathsig) its children.
	go func() { <-ctx.Done(); stop() }()
	return chaos.Run(ctx, o)
}
