package worker

import (
	"context"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/selffault"
)

var emfile = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", syscall.EMFILE)}

// A worker that cannot open a socket to its peer has run out of its own
// descriptors: the cells must say so, never peer-lost (which blames the
// peer, and then the fabric).
func TestRunTaskOutOfDescriptorsIsTesterFault(t *testing.T) {
	a, b, rt := twoAgents(t)
	rt.before = func() error { return emfile }
	res := a.RunTask(context.Background(), railTask(a, b, 4))
	if res.Tester == nil || res.Tester.Class != probe.ClassTester {
		t.Fatalf("result carries no tester fault: %+v", res.Tester)
	}
	for _, rr := range res.Rails {
		if rr.Class != probe.ClassTester {
			t.Errorf("rail %d: class %s (%v), want %s", rr.Rail, rr.Class, rr.Error, probe.ClassTester)
		}
	}
	for _, want := range []string{"worker a", "file descriptors", "connecting to worker b"} {
		if !strings.Contains(res.Tester.Cause, want) {
			t.Errorf("cause %q lacks %q", res.Tester.Cause, want)
		}
	}
}

// An exhaustion elsewhere in the process while the task runs (here: an
// accept that failed) makes the task's failures suspect: the failed rail
// becomes a tester fault, the measured ones keep their figures, and the
// result says why.
func TestRunTaskDuringExhaustionIsSuspect(t *testing.T) {
	a, b, rt := twoAgents(t, "b/mlx5_2:down")
	rt.before = func() error {
		selffault.Note("accepting a worker API connection", emfile)
		return nil
	}
	res := a.RunTask(context.Background(), railTask(a, b, 4))
	if res.Tester == nil {
		t.Fatal("no tester fault on the result")
	}
	for _, rr := range res.Rails {
		want := probe.ClassOK
		if rr.Rail == 2 {
			want = probe.ClassTester
		}
		if rr.Class != want {
			t.Errorf("rail %d: class %s, want %s", rr.Rail, rr.Class, want)
		}
	}
}
