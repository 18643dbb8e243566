package selffault

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestResource(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("connection refused"), ""},
		{syscall.ECONNREFUSED, ""},
		{syscall.EMFILE, "file descriptors"},
		{syscall.ENFILE, "file descriptors"},
		// As net/http returns it: wrapped twice.
		{fmt.Errorf("Post x: %w", &net.OpError{Op: "dial", Err: os.NewSyscallError("socket", syscall.EMFILE)}), "file descriptors"},
		{&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EMFILE)}, "file descriptors"},
		{syscall.ENOMEM, "memory"},
		{syscall.ENOBUFS, "memory"},
	} {
		if got := Resource(tc.err); got != tc.want {
			t.Errorf("Resource(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// fakeListener fails every Accept with err.
type fakeListener struct {
	net.Listener
	err error
}

func (f fakeListener) Accept() (net.Conn, error) { return nil, f.err }

func TestListenerRecordsExhaustion(t *testing.T) {
	before := Count()
	l := Listener(fakeListener{err: errors.New("use of closed network connection")}, "accepting")
	if _, err := l.Accept(); err == nil || Count() != before {
		t.Fatalf("a closed listener is no resource fault: err %v, count %d → %d", err, before, Count())
	}
	l = Listener(fakeListener{err: &net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EMFILE)}}, "accepting a worker API connection")
	if _, err := l.Accept(); !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("Accept must pass the error on, got %v", err)
	}
	if Count() != before+1 {
		t.Fatalf("count %d, want %d", Count(), before+1)
	}
	ev, ok := Last()
	if !ok || ev.Op != "accepting a worker API connection" || ev.Resource != "file descriptors" {
		t.Fatalf("last event %+v", ev)
	}
	cause, fix := ev.Cause("worker node-033"), ev.Fix()
	for _, want := range []string{"tester fault", "worker node-033", "file descriptors", "accepting a worker API connection", "RLIMIT_NOFILE"} {
		if !strings.Contains(cause, want) {
			t.Errorf("cause %q lacks %q", cause, want)
		}
	}
	if !strings.Contains(fix, "LimitNOFILE") || !strings.Contains(fix, "ulimit -n") {
		t.Errorf("fix %q names no way to raise the limit", fix)
	}
}

// TestRealExhaustion lowers this process's soft limit until a real socket
// call fails, so the classification is proven on the kernel's own error.
func TestRealExhaustion(t *testing.T) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Skip(err)
	}
	b := ReadBudget()
	if b.Open < 0 {
		t.Skip("no /proc/self/fd")
	}
	low := rl
	low.Cur = uint64(b.Open + 8)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip(err)
	}
	defer func() {
		// Left lowered, the limit would starve the package's later tests.
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			t.Errorf("restore the open-file limit: %v", err)
		}
	}()
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	var err error
	for range 64 {
		var l net.Listener
		if l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			break
		}
		held = append(held, l)
	}
	if err == nil {
		t.Fatal("64 listeners under a limit of open+8: the limit did not bite")
	}
	if Resource(err) != "file descriptors" {
		t.Fatalf("the kernel's error %v is not recognised as descriptor exhaustion", err)
	}
	if got := RaiseLimit(); got.Soft != rl.Max {
		t.Errorf("RaiseLimit: soft %d, want the hard limit %d", got.Soft, rl.Max)
	}
}
