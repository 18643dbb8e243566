package coordinator

import (
	"bytes"
	"log/slog"
	"math"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/coordinator/store"
	"github.com/rdmamesh/rdmamesh/internal/api"
)

func TestMemoryAdvice(t *testing.T) {
	const n1024, n4096 = 1024 * 1023 * 8, 4096 * 4095 * 8
	for _, tc := range []struct {
		name  string
		kept  []int
		limit uint64
		need  uint64
		fix   string
	}{
		{"no limit", []int{n4096, n4096}, 0, 2 * n4096 * bytesPerCell, ""},
		{"one 4,096 sweep under 5 GiB", []int{n4096}, 5 << 30, n4096 * bytesPerCell, ""},
		{"two 4,096 sweeps under 5 GiB: keep one", []int{n4096, n4096}, 5 << 30, 2 * n4096 * bytesPerCell,
			"lower coordinator.keep_sweeps to 1 (sweeps this size each hold 2.5 GB), or raise the container's memory limit to about 8.1 GB"},
		{"fifty 1,024 sweeps in the base's 2 Gi pod", repeat(n1024, 50), 1932735283, 50 * n1024 * bytesPerCell,
			"lower coordinator.keep_sweeps to 8 (sweeps this size each hold 0.2 GB), or raise the container's memory limit to about 12.6 GB"},
		{"one 4,096 sweep in a 2 Gi pod", []int{n4096}, 1932735283, n4096 * bytesPerCell,
			"raise the container's memory limit to about 4.0 GB (or coordinator.memory_limit); one sweep this size holds 2.5 GB"},
		{"nothing kept", nil, 1 << 30, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			need, fix := memoryAdvice(tc.kept, tc.limit)
			if need != tc.need || fix != tc.fix {
				t.Fatalf("got %d, %q\nwant %d, %q", need, fix, tc.need, tc.fix)
			}
		})
	}
}

func repeat(n, times int) []int {
	out := make([]int, times)
	for i := range out {
		out[i] = n
	}
	return out
}

// The leader's check reads the kept sweeps from the FSM and the limit from
// the runtime, and warns with the fix only when they crowd it.
func TestMemoryCheckWarns(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	var logs bytes.Buffer
	c := &Coordinator{log: slog.New(slog.NewTextHandler(&logs, nil)), fsm: store.New(50, nil)}
	start := func(id string, cells int) {
		c.fsm.Apply(entry(t, store.Start{Info: api.SweepInfo{ID: id, State: api.SweepRunning, Cells: cells}}))
	}
	start("s1", 1_000_000) // 19 MB
	debug.SetMemoryLimit(64 << 20)
	c.memoryCheck("s1")
	if logs.Len() != 0 {
		t.Fatalf("one 19 MB sweep under 64 MiB warned: %s", logs.String())
	}
	start("s2", 2_000_000) // 38 MB more: 57 MB of 64 MiB
	c.memoryCheck("s2")
	if !strings.Contains(logs.String(), "sweep=s2 kept_sweeps=2 held_bytes=57000000") || !strings.Contains(logs.String(), "keep_sweeps to 1") {
		t.Fatalf("no warning naming the fix: %q", logs.String())
	}
	logs.Reset()
	debug.SetMemoryLimit(math.MaxInt64)
	c.memoryCheck("s2")
	if logs.Len() != 0 {
		t.Fatalf("warned without a memory limit: %s", logs.String())
	}
}
