package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rdmamesh/rdmamesh/internal/config"
	"github.com/rdmamesh/rdmamesh/internal/selffault"
)

// exitCoder lets a command choose the process exit code.
type exitCoder interface{ ExitCode() int }

type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string { return e.err.Error() }
func (e *codeError) ExitCode() int { return e.code }
func (e *codeError) Unwrap() error { return e.err }

// exitCode ends a command with a code and no further message (the command
// already printed what the user needs).
func exitCode(code int) error { return &codeError{code: code, err: errSilent} }

var errSilent = errors.New("")

// run is main without the os.Exit, so exit codes are testable in-process.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runContext(ctx, args, stdout, stderr)
}

// runContext is run until ctx ends (an interrupt, or a test's cancel).
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	code := 2 // usage, config or infrastructure error
	var ec exitCoder
	if errors.As(err, &ec) {
		code = ec.ExitCode()
	}
	// Exit 1 is a verdict (unhealthy fabric, failing check) that the command
	// has already reported in full.
	if !errors.Is(err, errSilent) && code != 1 {
		fmt.Fprintf(stderr, "rdmamesh: %v\n", err)
	}
	return code
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "rdmamesh",
		Short: "Validate an RDMA fabric: all-pairs RDMA WRITE latency and bandwidth, with verdicts",
		Long: "rdmamesh runs a worker on every node and a coordinator that tests every pair of HCAs\n" +
			"on every rail, then says which HCA, node or rail is to blame.\n\n" +
			"Exit codes: 0 healthy; 1 unhealthy fabric (or a failing check); 2 usage or configuration error,\n" +
			"or a daemon that cannot start; 3 the fabric could not be judged (gate, demo --once): coordinator\n" +
			"unreachable, sweep failed or over its budget, or a tester fault such as rdmamesh itself running\n" +
			"out of file descriptors; 4 (gate) nothing failed but a confident suspect is slow; 5 (gate) nothing failed\n" +
			"but a port is not cabled as planned. Only exit 1 blames the fabric's health.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().String("config", "", "YAML config file (list keys with: rdmamesh config keys)")
	root.PersistentFlags().String("log-level", "info", "log level: debug, info, warn, error")
	root.PersistentFlags().String("log-format", "text", "log format: text or json")
	root.AddCommand(newWorkerCmd(), newCoordinatorCmd(), newDemoCmd(), newGateCmd(), newDoctorCmd(),
		newProbeCmd(), newVersionCmd(), newConfigCmd(), newKeygenCmd(), newTopologyCmd(), newTraceCmd(), newCablingCmd())
	return root
}

// loadConfig reads --config, the environment and the command's flags; flags
// map to keys through binds (flag name → key).
func loadConfig(cmd *cobra.Command, binds map[string]string) (*config.Config, error) {
	file, _ := cmd.Flags().GetString("config")
	flags := map[string]*pflag.Flag{}
	binds["log-level"], binds["log-format"] = "log.level", "log.format"
	for name, key := range binds {
		f := cmd.Flags().Lookup(name)
		if f == nil {
			return nil, fmt.Errorf("internal: flag --%s not defined", name)
		}
		if f.Changed {
			flags[key] = f
		}
	}
	c, err := config.Load(file, flags)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func newLogger(c *config.Config, w io.Writer) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(strings.ToUpper(c.Log.Level)))
	opts := &slog.HandlerOptions{Level: lvl}
	if c.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func errorf(format string, a ...any) error { return fmt.Errorf(format, a...) }

// Descriptor needs, from measurement (cluster TestDescriptorsStayFlat
// and the 128 x 8 demo): a worker holds its listeners, the device files of
// its HCAs and a handful of pooled connections; an in-process demo holds
// about 13 a simulated node after a sweep and peaks near 7 a node more.
const workerDescriptors = 256

func demoDescriptors(nodes int) int { return 24*nodes + 128 }

// descriptorBudget lifts the open-file limit to its hard maximum and logs
// it, warning when it is below what the role needs (need 0: unknown until
// workers join). Running out is caught and reported as a tester fault
// (gate exit 3) anyway; the warning says so before a sweep is spent on it.
func descriptorBudget(log *slog.Logger, role string, need int) {
	b := selffault.RaiseLimit()
	args := []any{"role", role, "soft_limit", b.Soft, "hard_limit", b.Hard, "open", b.Open}
	if need > 0 && b.Soft < uint64(need) {
		log.Warn("open-file limit is below what this run needs; a sweep that runs out stops as a tester fault (exit 3)",
			append(args, "need_about", need, "fix", fmt.Sprintf("ulimit -n %d (systemd: LimitNOFILE=%d)", 2*need, 2*need))...)
		return
	}
	log.Info("open-file budget", args...)
}

// memoryBudget sets the runtime's soft memory limit from
// coordinator.memory_limit (selffault.ChooseMemoryLimit says how "auto"
// decides) and logs it with the container limit it read.
func memoryBudget(log *slog.Logger, c *config.Config, role string) error {
	m, err := selffault.ChooseMemoryLimit("coordinator.memory_limit", c.Coordinator.MemoryLimit, os.Getenv("GOMEMLIMIT"), os.DirFS("/"))
	if err != nil {
		return &config.FieldError{Key: "coordinator.memory_limit", Msg: err.Error()}
	}
	limit := m.Apply()
	args := []any{"role", role, "source", m.Source}
	if m.Cgroup > 0 {
		args = append(args, "cgroup_limit_bytes", m.Cgroup, "cgroup", m.CgroupPath)
	}
	switch {
	case limit < math.MaxInt64:
		log.Info("memory limit", append(args, "soft_limit_bytes", limit)...)
	case strings.EqualFold(os.Getenv("GOGC"), "off"):
		// Nothing would ever collect: the heap grows until the kernel kills us.
		log.Warn("GOGC=off without a memory limit: the collector never runs and the heap grows without bound",
			append(args, "fix", "set coordinator.memory_limit (e.g. 5GiB) or GOMEMLIMIT, or unset GOGC")...)
	default:
		log.Info("memory limit: none; the heap may grow to about twice what a sweep holds", args...)
	}
	return nil
}
