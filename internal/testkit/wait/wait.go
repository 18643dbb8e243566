// Package wait is the condition wait the packages' tests share: a test
// waits for what it needs to see, never a fixed sleep.
package wait

import (
	"testing"
	"time"
)

// For polls cond until it holds, and fails the test naming what it waited
// for if 10 s pass first.
func For(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	Within(tb, 10*time.Second, what, cond)
}

// Within is For with a limit of d: a whole sweep, a browser's page or a
// gossip round can take longer than For's 10 s.
func Within(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	Until(tb, d, what, func() error {
		if cond() {
			return nil
		}
		return errNotYet
	})
}

// Until polls check until it returns nil, and fails the test with what it
// waited for and check's last error if d passes first, so the failure shows
// the state it stopped in. check may call t.Fatal itself to stop early.
func Until(tb testing.TB, d time.Duration, what string, check func() error) {
	tb.Helper()
	deadline := time.Now().Add(d)
	// Polls start fast, for the common case of a condition a moment away,
	// and slow down to a hundredth of the limit (at most 250 ms), for
	// conditions that cost a request or a browser round trip to read.
	every, slowest := 2*time.Millisecond, min(max(d/100, 2*time.Millisecond), 250*time.Millisecond)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			if err == errNotYet {
				tb.Fatalf("timed out after %v waiting for %s", d, what)
			}
			tb.Fatalf("timed out after %v waiting for %s: %v", d, what, err)
		}
		time.Sleep(every)
		every = min(2*every, slowest)
	}
}

type notYet struct{}

func (notYet) Error() string { return "not yet" }

var errNotYet error = notYet{}
