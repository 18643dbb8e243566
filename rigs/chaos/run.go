package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/testkit/procstat"
)

// Options configure a chaos run.
type Options struct {
	Bin         string        // the rdmamesh binary under test
	Dir         string        // work dir for logs and data; "" = a new temp dir
	Keep        bool          // keep Dir after a passing run
	Workers     int           // worker processes, at least 6
	Trials      int           // leader-kill trials
	TimeScale   float64       // sim time scale: how long a pair test takes
	Seed        int64         // picks kill moments, victims and entry points
	PairTimeout time.Duration // coordinator --pair-timeout
	Scenarios   string        // which of a, b, c, d to run, e.g. "abcd"
	LogLevel    string        // the children's --log-level
	// Scale > 0 runs against that many control-mode workers in this
	// process instead of worker processes (big.go: chaos at scale).
	Scale int
	// MemLimit stops the run (a violation) once this process and its
	// children hold more resident memory together; 0 = no limit.
	MemLimit uint64
	Out      io.Writer
}

func (o *Options) check() error {
	var errs []error
	if o.Bin == "" {
		errs = append(errs, errors.New("-bin: path of the rdmamesh binary is required"))
	} else if _, err := os.Stat(o.Bin); err != nil {
		errs = append(errs, fmt.Errorf("-bin: %w (build it with `make build-noverbs`)", err))
	}
	switch {
	case o.Scale > 0 && o.Scale < 16:
		errs = append(errs, fmt.Errorf("-scale %d: want at least 16 (or 0 for worker processes)", o.Scale))
	case o.Scale > 0 && strings.Trim(o.Scenarios, "abc") != "":
		errs = append(errs, fmt.Errorf("-scenarios %q: at scale, want letters from abc", o.Scenarios))
	case o.Scale == 0 && o.Workers < 6:
		errs = append(errs, fmt.Errorf("-workers %d: want at least 6", o.Workers))
	}
	if o.Trials < 1 {
		errs = append(errs, fmt.Errorf("-trials %d: want at least 1", o.Trials))
	}
	if o.TimeScale < 0 || o.TimeScale > 100 {
		errs = append(errs, fmt.Errorf("-time-scale %g: want 0..100 (the worker's limit)", o.TimeScale))
	}
	if o.PairTimeout <= 0 {
		errs = append(errs, fmt.Errorf("-pair-timeout %s: want a positive duration", o.PairTimeout))
	}
	if strings.Trim(o.Scenarios, "abcd") != "" || o.Scenarios == "" {
		errs = append(errs, fmt.Errorf("-scenarios %q: want letters from abcd", o.Scenarios))
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	return errors.Join(errs...)
}

// Exit codes of Run.
const (
	ExitPass      = 0
	ExitViolation = 1
	ExitSetup     = 2 // bad options, or the cluster never came up
)

// Run starts the cluster, runs the chosen scenarios, prints the figures and
// returns an exit code. Every process it starts is stopped before it
// returns, also on a panic or when ctx ends (the command cancels ctx on
// SIGINT and SIGTERM).
func Run(ctx context.Context, o Options) (code int) {
	start := time.Now()
	if err := o.check(); err != nil {
		fmt.Fprintf(orStderr(o.Out), "chaos: %v\n", err)
		return ExitSetup
	}
	say := func(format string, a ...any) {
		fmt.Fprintf(o.Out, "%7.1fs  %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, a...))
	}
	if o.Dir == "" {
		dir, err := os.MkdirTemp("", "rdmamesh-chaos-")
		if err != nil {
			fmt.Fprintf(o.Out, "chaos: %v\n", err)
			return ExitSetup
		}
		o.Dir = dir
	} else if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		fmt.Fprintf(o.Out, "chaos: %v\n", err)
		return ExitSetup
	}
	bin, err := filepath.Abs(o.Bin)
	if err != nil {
		fmt.Fprintf(o.Out, "chaos: %v\n", err)
		return ExitSetup
	}
	o.Bin = bin
	if o.Scale > 0 {
		o.Workers = 0 // the fleet stands in for worker processes
	}
	cl, err := newCluster(o, say)
	if err != nil {
		fmt.Fprintf(o.Out, "chaos: %v\n", err)
		return ExitSetup
	}
	r := &report{}
	s := &scenarios{c: cl, o: o, r: r, say: say}
	var big *bigRun
	if o.Scale > 0 {
		if big, err = newBigRun(s); err != nil {
			cl.net.Close()
			fmt.Fprintf(o.Out, "chaos: %v\n", err)
			return ExitSetup
		}
	}
	parent := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	guard := &procstat.Guard{Limit: o.MemLimit, Children: cl.pids, Name: "driver"}
	stopGuard := guard.Start(context.WithoutCancel(ctx), cancel) // it samples through the teardown too
	defer func() {
		if v := recover(); v != nil {
			r.fail("driver", fmt.Errorf("panic: %v", v))
			code = ExitViolation
		}
		say("stopping every process")
		if big != nil && !big.stop() && code == ExitPass {
			code = ExitViolation
		}
		cl.Stop()
		peak, hit := stopGuard()
		if hit != nil {
			r.fail("memory guard", hit)
			code = ExitViolation
		}
		r.note("driver", "peak resident memory, this process and its children", mb(peak))
		if !errors.Is(parent.Err(), context.Canceled) {
			logs, answers := cl.secretLeaks(), cl.api.leaked()
			if big != nil && big.leaks() {
				logs = append(logs, "fleet.log")
			}
			r.add("secrets", "token or gossip key in process logs", orNone(logs), "none", len(logs) == 0)
			r.add("secrets", "token or gossip key in API answers", orNone(answers), "none", len(answers) == 0)
			if len(logs)+len(answers) > 0 && code == ExitPass {
				code = ExitViolation
			}
		}
		fmt.Fprintln(o.Out)
		r.write(o.Out)
		if big != nil {
			big.summary(o.Out)
		}
		fmt.Fprintf(o.Out, "\nwall time %s\n", time.Since(start).Round(100*time.Millisecond))
		switch {
		case code != ExitPass:
			fmt.Fprintf(o.Out, "FAIL: logs and data kept in %s\n", o.Dir)
			for _, b := range r.bad {
				fmt.Fprintf(o.Out, "  - %s\n", b)
			}
		case o.Keep:
			fmt.Fprintf(o.Out, "PASS (logs and data kept in %s)\n", o.Dir)
		default:
			_ = os.RemoveAll(o.Dir)
			fmt.Fprintln(o.Out, "PASS")
		}
	}()
	setup := s.setup
	steps := map[byte]func(context.Context) error{'a': s.leaderKill, 'b': s.workerKill, 'c': s.partition, 'd': s.restartAll}
	if big != nil {
		setup = big.setup
		steps = map[byte]func(context.Context) error{'a': big.leaderKill, 'b': big.workerKill, 'c': big.partition}
	}
	if err := setup(ctx); err != nil {
		r.fail("setup", withCause(ctx, err))
		return ExitSetup
	}
	names := map[byte]string{'a': "(a) leader kill", 'b': "(b) worker kill", 'c': "(c) partition", 'd': "(d) restart all"}
	for i := range len(o.Scenarios) {
		k := o.Scenarios[i]
		if ctx.Err() != nil {
			r.fail(names[k], withCause(ctx, ctx.Err()))
			break
		}
		say("=== %s", names[k])
		if err := steps[k](ctx); err != nil {
			// A scenario that could not finish leaves the cluster in an
			// unknown state: later ones would only report its aftermath.
			r.fail(names[k], withCause(ctx, err))
			break
		}
	}
	if len(r.bad) > 0 {
		return ExitViolation
	}
	return ExitPass
}

func orStderr(w io.Writer) io.Writer {
	if w == nil {
		return os.Stderr
	}
	return w
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// withCause adds why ctx ended (the memory guard) to an error it caused.
func withCause(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil && c != ctx.Err() && !errors.Is(err, c) {
		return fmt.Errorf("%w (%v)", err, c)
	}
	return err
}
