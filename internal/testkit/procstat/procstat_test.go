package procstat

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
)

func needProc(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
}

func TestReadings(t *testing.T) {
	needProc(t)
	rss, hwm := RSS(Self), HWM(Self)
	if rss < 1<<20 || hwm < rss {
		t.Fatalf("VmRSS %d, VmHWM %d: a Go test process holds over 1 MiB and its peak is at least that", rss, hwm)
	}
	if RSS(os.Getpid()) == 0 {
		t.Fatal("own pid unreadable")
	}
	if RSS(0) != 0 {
		t.Fatal("pid 0 (no child) must not read as this process")
	}
	busy := time.Now()
	for time.Since(busy) < 50*time.Millisecond {
	}
	c, err := CPU(Self)
	if err != nil || c < 10*time.Millisecond {
		t.Fatalf("CPU %s, %v after 50 ms of spinning", c, err)
	}
	if Status(Self, "NoSuchField") != 0 {
		t.Fatal("a missing field must read 0")
	}
}

func TestGoneProcess(t *testing.T) {
	needProc(t)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	pid := cmd.Process.Pid
	if RSS(pid) != 0 {
		t.Fatal("a reaped process has no resident set")
	}
	if _, err := CPU(pid); err == nil {
		t.Fatal("a reaped process's CPU must be an error")
	}
}

func TestGuardBreach(t *testing.T) {
	needProc(t)
	g := &Guard{Limit: 1 << 20, Every: time.Millisecond, Children: func() map[string]int { return map[string]int{"me-again": os.Getpid(), "gone": 0} }}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := g.Watch(ctx)
	var b *BreachError
	if !errors.As(err, &b) || b.Sum < 2*RSS(Self)/3 || len(b.Parts) != 2 || !strings.Contains(err.Error(), "me-again") {
		t.Fatalf("want a breach naming this process and the child, got %v", err)
	}
	if g.Peak() != b.Sum {
		t.Fatalf("peak %d, breach at %d", g.Peak(), b.Sum)
	}
}

func TestGuardUnderLimit(t *testing.T) {
	needProc(t)
	g := &Guard{Limit: 1 << 40, Every: time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	var called bool
	stop := g.Start(ctx, func(error) { called = true })
	wait.For(t, "the guard's first reading", func() bool { return g.Peak() != 0 })
	cancel()
	peak, hit := stop()
	if hit != nil || called || peak == 0 {
		t.Fatalf("peak %d, breach %v, called %v", peak, hit, called)
	}
}

// Steal is read from /proc/stat's cpu line, field 8, in hundredths of a
// second; anything else reads as none.
func TestParseSteal(t *testing.T) {
	for stat, want := range map[string]time.Duration{
		"cpu  7420222 7720 1254854 5868100 71354 0 107819 86771 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n": 867710 * time.Millisecond,
		"cpu  1 2 3 4 5 6 7\n":        0,
		"cpu0 1 2 3 4 5 6 7 8 9 10\n": 0,
		"cpu  1 2 3 4 5 6 7 x 0 0\n":  0,
		"":                            0,
	} {
		if got := parseSteal(stat); got != want {
			t.Errorf("%q: %v, want %v", stat, got, want)
		}
	}
}
