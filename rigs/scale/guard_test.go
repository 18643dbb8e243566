package scale

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/testkit/procstat"
)

func TestGuardRSSStopsARunPastItsLimit(t *testing.T) {
	if procstat.RSS(procstat.Self) == 0 {
		t.Skip("no /proc/self/status")
	}
	var out bytes.Buffer
	code := make(chan int, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Any Go test process is past 1 MiB: the guard must fire at once.
	GuardRSS(ctx, 1<<20, time.Millisecond, &out, func(c int) { code <- c })
	select {
	case c := <-code:
		if c != ExitRSSGuard || !strings.Contains(out.String(), "BENCH_RSS_LIMIT_MB") {
			t.Fatalf("exit %d, message %q", c, out.String())
		}
	default:
		t.Fatal("the guard returned without stopping a run over its limit")
	}
}

func TestGuardRSSLetsARunUnderItsLimitGo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	GuardRSS(ctx, DefaultRSSLimit, time.Millisecond, &bytes.Buffer{}, func(c int) { t.Fatalf("stopped with %d under the limit", c) })
}

func TestRSSLimitStaysOnBelow16GB(t *testing.T) {
	if DefaultRSSLimit > MaxRSSLimit || MaxRSSLimit > 16_000_000_000 {
		t.Fatalf("default %d, ceiling %d: the guard must stop a run before 16 GB", uint64(DefaultRSSLimit), uint64(MaxRSSLimit))
	}
	if got, err := RSSLimit(""); err != nil || got != DefaultRSSLimit {
		t.Fatalf("unset: %d, %v", got, err)
	}
	if got, err := RSSLimit("8192"); err != nil || got != 8<<30 {
		t.Fatalf("8192: %d, %v", got, err)
	}
	for _, bad := range []string{"0", "-1", "lots", "15259", "20000"} {
		if got, err := RSSLimit(bad); err == nil {
			t.Errorf("%q gave %d, want an error", bad, got)
		}
	}
}
