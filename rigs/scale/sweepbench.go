package scale

import (
	"context"
	"os"
	"runtime/debug"
	"strconv"
	"testing"
	"time"
)

// SweepBench sets up a benchmark that runs one control sweep before it
// measures what reads the result (web/e2e's browser, deploytest's
// Prometheus). It skips unless env is set, since the sweep takes minutes
// at 4,096 nodes. The node count comes from env+"_NODES" (default 4,096).
// Until tb ends, the process runs under a Go memory limit of 5 GiB
// (coordinator.memory_limit as docs/scale.md runs 4,096), and GuardRSS
// stops it past DefaultRSSLimit. The context ends with tb.
func SweepBench(tb testing.TB, env string) (int, context.Context) {
	tb.Helper()
	if os.Getenv(env) == "" {
		tb.Skipf("%s=1 runs a whole control sweep first (minutes at 4,096)", env)
	}
	n := 4096
	if v := os.Getenv(env + "_NODES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 2 {
			tb.Fatalf("%s_NODES=%q: want a node count >= 2", env, v)
		}
	}
	limit := debug.SetMemoryLimit(5 << 30)
	ctx, stop := context.WithCancel(context.Background())
	guarded := make(chan struct{})
	go func() {
		defer close(guarded)
		GuardRSS(ctx, DefaultRSSLimit, 250*time.Millisecond, os.Stderr, os.Exit)
	}()
	tb.Cleanup(func() {
		stop()
		<-guarded
		debug.SetMemoryLimit(limit)
	})
	return n, ctx
}
