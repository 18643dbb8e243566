// Package wait is the condition wait the packages' tests share: a test
// waits for what it needs to see, never a fixed sleep.
package wait

import (
	"testing"
	"time"
)

// For polls cond every few milliseconds until it holds, and fails the
// test naming what it waited for if 10 s pass first.
func For(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
