package scale

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/testkit/procstat"
)

// DefaultRSSLimit is where a benchmark stops itself: 14 GiB (15.0 GB), well
// under this machine's 24 GiB, so a runaway run ends as a failed row instead
// of taking the whole machine (and every session on it) down with the
// kernel's OOM killer. It leaves a GB under MaxRSSLimit for what a run can
// allocate between two 250 ms samples.
const DefaultRSSLimit = 14 << 30

// MaxRSSLimit is the most BENCH_RSS_LIMIT_MB may ask for: the benchmark
// stops before the process passes 16 GB, whatever the environment says.
const MaxRSSLimit = 16_000_000_000

// RSSLimit turns BENCH_RSS_LIMIT_MB ("" = the default) into bytes. Zero
// (which would make the guard only watch), garbage and anything past
// MaxRSSLimit are refused: the guard cannot be switched off by accident.
func RSSLimit(mb string) (uint64, error) {
	if mb == "" {
		return DefaultRSSLimit, nil
	}
	v, err := strconv.ParseUint(mb, 10, 64)
	if err != nil || v == 0 || v > MaxRSSLimit>>20 {
		return 0, fmt.Errorf("BENCH_RSS_LIMIT_MB=%q: want 1..%d (MiB; the guard stays on, below 16 GB)", mb, uint64(MaxRSSLimit>>20))
	}
	return v << 20, nil
}

// GuardRSS samples this process's resident set every interval until ctx
// ends; past limit it writes why to out and calls exit(code). It is the
// benchmark's own brake (procstat.Guard).
func GuardRSS(ctx context.Context, limit uint64, every time.Duration, out io.Writer, exit func(int)) {
	g := &procstat.Guard{Limit: limit, Every: every, Name: "the benchmark"}
	var b *procstat.BreachError
	if err := g.Watch(ctx); errors.As(err, &b) {
		fmt.Fprintf(out, "bench: resident memory %d MiB passed the guard of %d MiB (BENCH_RSS_LIMIT_MB): stopping this run before the machine runs out\n",
			b.Sum>>20, b.Limit>>20)
		exit(ExitRSSGuard)
	}
}

// ExitRSSGuard is the exit code of a run GuardRSS stopped.
const ExitRSSGuard = 4
