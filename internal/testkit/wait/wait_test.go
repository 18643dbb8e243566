package wait

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fatalTB records a Fatalf and ends its goroutine, as testing's does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls wait in a goroutine of its own, so a Fatalf ends only that.
func run(wait func(testing.TB)) string {
	f := &fatalTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait(f)
	}()
	<-done
	return f.msg
}

func TestUntil(t *testing.T) {
	calls := 0
	if msg := run(func(tb testing.TB) {
		tb.Helper()
		For(tb, "the third call", func() bool { calls++; return calls == 3 })
	}); msg != "" || calls != 3 {
		t.Fatalf("a condition that holds on the third call: %d calls, failure %q", calls, msg)
	}
	msg := run(func(tb testing.TB) {
		tb.Helper()
		Until(tb, 20*time.Millisecond, "the queue to drain", func() error { return errors.New("7 left") })
	})
	if !strings.Contains(msg, "the queue to drain") || !strings.Contains(msg, "7 left") {
		t.Fatalf("a failed wait says %q: want what it waited for and the last state", msg)
	}
	msg = run(func(tb testing.TB) {
		tb.Helper()
		Within(tb, 20*time.Millisecond, "never", func() bool { return false })
	})
	if !strings.Contains(msg, "never") || strings.Contains(msg, "not yet") {
		t.Fatalf("a failed boolean wait says %q", msg)
	}
}
