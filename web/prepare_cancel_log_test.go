package web

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/web/internal/synth"
)

// TestPrepareCancelLatency logs how long Prepare takes to return once its
// context is cancelled, over a synthetic sweep of PREPARE_CANCEL_NODES
// nodes x 8 rails: what a coordinator told to stop waits for. It measures,
// it asserts nothing, and it is skipped unless the variable is set (2,048
// takes a minute and about 1.5 GB):
//
//	PREPARE_CANCEL_NODES=2048 go test -run PrepareCancelLatency -v ./web/
//
// The cancel points are fractions of an uninterrupted preparation's time, so
// the same run lands in the first paint's walk and in the p50 layer's walks
// with or without interruptible walks; there is nothing else to wait on in
// a build that has no hook.
func TestPrepareCancelLatency(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("PREPARE_CANCEL_NODES"))
	if n <= 0 || testing.Short() {
		t.Skip("set PREPARE_CANCEL_NODES to measure (e.g. 2048)")
	}
	start := time.Now()
	m := synth.MatrixFrom(n, 8, synth.StandardFaults)
	t.Logf("%d x 8 (%d cells) analysed in %s", n, m.NumCells(), time.Since(start).Round(time.Millisecond))

	// run prepares m on a fresh server, cancelling after cancelAt (never
	// when 0), and returns how long Prepare ran and took after the cancel.
	run := func(cancelAt time.Duration) (total, after time.Duration) {
		s := New(doneBackend(m), Options{})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		stopped := make(chan struct{})
		start := time.Now()
		go func() { defer close(stopped); s.Prepare(ctx, time.Hour) }()
		if cancelAt == 0 {
			for !s.PreparedValues("big") { // blocks while the layer is built
				time.Sleep(time.Millisecond)
			}
			total = time.Since(start)
			cancel()
			<-stopped
			return total, 0
		}
		select {
		case <-stopped:
			t.Fatal("Prepare returned before its context was cancelled")
		case <-time.After(cancelAt):
		}
		cancelled := time.Now()
		cancel()
		<-stopped
		return time.Since(start), time.Since(cancelled)
	}
	run(0) // the first run also grows the heap: time the second
	full, _ := run(0)
	t.Logf("uninterrupted: first paint and p50 layer prepared in %s", full.Round(time.Millisecond))
	for _, f := range []float64{0.1, 0.3, 0.5, 0.7, 0.9} {
		at := time.Duration(f * float64(full))
		_, after := run(at)
		t.Logf("cancelled at %3.0f%% (%s): Prepare returned %s later", 100*f, at.Round(time.Millisecond), after.Round(time.Millisecond))
	}
}
