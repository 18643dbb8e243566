package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// memoryCgroup makes a fresh memory cgroup limited to limit bytes, as the
// kernel offers it here (v1's memory controller, or v2 at the root), and
// returns the file a pid is written to to join it. It skips where the
// test cannot: not root, no writable memory controller.
func memoryCgroup(t *testing.T, limit uint64) (procs, rel string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a memory cgroup")
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skipf("no /proc/self/cgroup: %v", err)
	}
	var dir, file string
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && strings.Contains(","+parts[1]+",", ",memory,") {
			dir, file, rel = filepath.Join("/sys/fs/cgroup/memory", parts[2]), "memory.limit_in_bytes", parts[2]
		}
	}
	if dir == "" {
		if c, err := os.ReadFile("/sys/fs/cgroup/cgroup.subtree_control"); err != nil || !strings.Contains(string(c), "memory") {
			t.Skip("no memory cgroup controller this test can use (v1 memory, or v2 with memory enabled at the root)")
		}
		dir, file, rel = "/sys/fs/cgroup", "memory.max", "/"
	}
	name := fmt.Sprintf("rdmamesh-memtest-%d", os.Getpid())
	cg := filepath.Join(dir, name)
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Skipf("cannot make a cgroup here: %v", err)
	}
	t.Cleanup(func() {
		// The test has killed and reaped its child, so the cgroup is empty.
		if err := os.Remove(cg); err != nil {
			t.Errorf("cgroup %s left behind: %v", cg, err)
		}
	})
	if err := os.WriteFile(filepath.Join(cg, file), fmt.Appendf(nil, "%d", limit), 0o644); err != nil {
		t.Fatalf("set %s: %v", file, err)
	}
	return filepath.Join(cg, "cgroup.procs"), filepath.Join(rel, name)
}

// The coordinator started in a container-like cgroup with a hard memory
// limit sets the runtime's soft limit to 90% of it by itself, reading the
// kernel's own files as it would in a pod.
func TestCoordinatorMemoryLimitFromRealCgroup(t *testing.T) {
	if os.Getenv("RDMAMESH_MEMTEST_CHILD") == "1" {
		t.Skip("the child runs the command, not this test")
	}
	var limit uint64 = 1 << 30
	procs, rel := memoryCgroup(t, limit)
	// The shell joins the cgroup before exec, so the coordinator reads its
	// limits from inside it from its first instruction.
	// The deadline ends a child that never logs a limit, and with it the scan.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", `echo $$ > "$0" && exec "$@"`, procs, os.Args[0], "-test.run=^TestMemoryLimitChild$", "-test.v")
	cmd.Env = append(os.Environ(), "RDMAMESH_MEMTEST_CHILD=1", "GOMEMLIMIT=", "GOGC=")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var got map[string]any
	var seen []string
	sc := bufio.NewScanner(out)
	for sc.Scan() && got == nil {
		seen = append(seen, sc.Text())
		var r map[string]any
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		// Every outcome but GOGC=off (cleared below) logs "memory limit…":
		// a wrong one fails below instead of leaving the scan waiting.
		if m, _ := r["msg"].(string); strings.HasPrefix(m, "memory limit") {
			got = r
		}
	}
	if got == nil {
		t.Fatalf("the coordinator logged no memory limit:\n%s", strings.Join(seen, "\n"))
	}
	want := float64(uint64(float64(limit) * 0.9))
	if got["soft_limit_bytes"] != want || got["cgroup_limit_bytes"] != float64(limit) || got["cgroup"] != rel {
		t.Fatalf("got %v; want soft_limit_bytes %.0f from cgroup %s (%d)", got, want, rel, limit)
	}
}

// TestMemoryLimitChild is the coordinator command that the test above
// starts in its cgroup.
func TestMemoryLimitChild(t *testing.T) {
	if os.Getenv("RDMAMESH_MEMTEST_CHILD") != "1" {
		t.Skip("run by TestCoordinatorMemoryLimitFromRealCgroup")
	}
	root := newRoot(os.Stdout, os.Stdout)
	root.SetArgs([]string{"coordinator", "--name", "c1", "--gossip-bind", "127.0.0.1:0", "--api-listen", "127.0.0.1:0", "--log-format", "json"})
	if err := root.ExecuteContext(t.Context()); err != nil {
		t.Fatal(err)
	}
}
