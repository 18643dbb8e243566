package coordinator

import "testing"

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
