package scale

import (
	"context"
	"fmt"
	"io"
	"time"
)

// DefaultRSSLimit is where a benchmark stops itself: well under this
// machine's 24 GiB, so a runaway run ends as a failed row instead of taking
// the whole machine (and every session on it) down with the kernel's OOM
// killer.
const DefaultRSSLimit = 15 << 30

// GuardRSS samples this process's resident set every interval until ctx
// ends; past limit it writes why to out and calls exit(code). It is the
// benchmark's own brake: debug.SetMemoryLimit only makes the collector try
// harder, it never stops a run that truly needs more.
func GuardRSS(ctx context.Context, limit uint64, every time.Duration, out io.Writer, exit func(int)) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if rss := procStatus("VmRSS"); rss > limit {
			fmt.Fprintf(out, "bench: resident memory %d MiB passed the guard of %d MiB (BENCH_RSS_LIMIT_MB): stopping this run before the machine runs out\n",
				rss>>20, limit>>20)
			exit(ExitRSSGuard)
			return
		}
	}
}

// ExitRSSGuard is the exit code of a run GuardRSS stopped.
const ExitRSSGuard = 4
