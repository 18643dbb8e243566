package main

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestDemoUnderLowFileLimit runs `rdmamesh demo --nodes 128 --rails 8
// --once` in a child process whose open-file limit is 1024, soft and hard,
// as `ulimit -n 1024` leaves a shell. The demo may pass, or stop with exit
// 3 naming the file limit; it must never blame the fabric (exit 1) for
// running out of its own descriptors.
func TestDemoUnderLowFileLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("a 128-node demo")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperDemoChild$")
	cmd.Env = append(os.Environ(), "RDMAMESH_TEST_CHILD_NOFILE=1024")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	tail := func(b bytes.Buffer) string {
		s := b.String()
		return s[max(0, len(s)-3000):]
	}
	t.Logf("demo under ulimit -n 1024: exit %d", code)
	switch code {
	case 0:
	case 3:
		for _, want := range []string{"tester fault", "file descriptors", "RLIMIT_NOFILE", "ulimit -n"} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("exit 3 without %q in stderr:\n%s", want, tail(stderr))
			}
		}
	default:
		t.Fatalf("exit %d: a tester fault must end 0 or 3, never blame the fabric\nstdout:\n%s\nstderr:\n%s", code, tail(stdout), tail(stderr))
	}
}

// TestHelperDemoChild is the child of TestDemoUnderLowFileLimit: it lowers
// its own limit and runs the command as main would.
func TestHelperDemoChild(t *testing.T) {
	limit, err := strconv.ParseUint(os.Getenv("RDMAMESH_TEST_CHILD_NOFILE"), 10, 64)
	if err != nil {
		t.Skip("only as the child of TestDemoUnderLowFileLimit")
	}
	rl := syscall.Rlimit{Cur: limit, Max: limit}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	os.Exit(run([]string{"demo", "--nodes", "128", "--rails", "8", "--once", "--listen", "127.0.0.1:0", "--log-level", "error"},
		os.Stdout, os.Stderr))
}
