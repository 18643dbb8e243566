package web

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/web/internal/synth"
)

// TestPrepareCancelLatency logs how long Prepare takes to return once its
// context is cancelled, over a synthetic sweep of PREPARE_CANCEL_NODES
// nodes x 8 rails: what a coordinator told to stop waits for. It measures,
// it asserts nothing, and it is skipped unless the variable is set (2,048
// takes a minute or two and about 1.5 GB):
//
//	PREPARE_CANCEL_NODES=2048 go test -run PrepareCancelLatency -v ./web/
//
// The cancel points are fractions of an uninterrupted preparation's time,
// so they land in the first paint's walk and in the p50 layer's walks with
// or without interruptible walks: there is nothing else to wait on in a
// build without the walk hook.
func TestPrepareCancelLatency(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("PREPARE_CANCEL_NODES"))
	if n <= 0 || testing.Short() {
		t.Skip("set PREPARE_CANCEL_NODES to measure (e.g. 2048)")
	}
	start := time.Now()
	m := synth.MatrixFrom(n, 8, synth.StandardFaults)
	t.Logf("%d x 8 (%d cells) analysed in %s", n, m.NumCells(), time.Since(start).Round(time.Millisecond))

	// run prepares m on a fresh server, cancelling after cancelAt (never
	// when 0). It returns when the preparation finished (zero if it did
	// not) and when Prepare returned, both from its start, and when the
	// cancel came.
	run := func(cancelAt time.Duration) (done, returned, cancelled time.Duration) {
		w := &doneWriter{done: make(chan struct{})}
		s := New(doneBackend(m), Options{Logger: slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		start := time.Now()
		go func() { defer close(stopped); s.Prepare(ctx, time.Hour) }()
		if cancelAt == 0 {
			select {
			case <-w.done:
			case <-time.After(10 * time.Minute):
				cancel()
				<-stopped
				t.Fatal("the preparation did not finish in 10 minutes")
			}
		} else {
			<-time.After(cancelAt)
		}
		cancelled = time.Since(start)
		cancel()
		<-stopped
		returned = time.Since(start)
		select {
		case <-w.done:
			done = w.at.Sub(start)
		default:
		}
		return done, returned, cancelled
	}
	run(0) // the first run also grows the heap: time the second
	full, _, _ := run(0)
	t.Logf("uninterrupted: first paint and p50 layer prepared in %s", full.Round(time.Millisecond))
	for _, f := range []float64{0.1, 0.3, 0.5, 0.7, 0.9} {
		done, returned, cancelled := run(time.Duration(f * float64(full)))
		note := ""
		if done != 0 && done <= cancelled {
			note = " (the preparation had finished)"
		}
		t.Logf("cancelled at %3.0f%% (%s): Prepare returned %s later%s", 100*f, cancelled.Round(time.Millisecond),
			(returned - cancelled).Round(time.Millisecond), note)
	}
}

// doneWriter takes a server's log and notes when the preparer said it had
// prepared the p50 layer, its last step: at that time, then done closes.
type doneWriter struct {
	once sync.Once
	at   time.Time
	done chan struct{}
}

func (w *doneWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(`msg="p50 layer prepared"`)) {
		w.once.Do(func() { w.at = time.Now(); close(w.done) })
	}
	return len(p), nil
}
