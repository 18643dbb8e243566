package scale

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/testing/procstat"
)

// DefaultRSSLimit is where a benchmark stops itself: well under this
// machine's 24 GiB, so a runaway run ends as a failed row instead of taking
// the whole machine (and every session on it) down with the kernel's OOM
// killer.
const DefaultRSSLimit = 15 << 30

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
