package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
)

// logBuffer collects a daemon's stderr while it runs.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// record returns the first JSON log record whose msg starts with prefix.
func (l *logBuffer) record(prefix string) map[string]any {
	for _, line := range strings.Split(l.String(), "\n") {
		var r map[string]any
		if json.Unmarshal([]byte(line), &r) == nil {
			if m, _ := r["msg"].(string); strings.HasPrefix(m, prefix) {
				return r
			}
		}
	}
	return nil
}

// waitRecord waits for a log record; the daemon ending first fails the test.
func (d *daemon) waitRecord(t *testing.T, prefix string) map[string]any {
	t.Helper()
	var r map[string]any
	wait.Until(t, 30*time.Second, fmt.Sprintf("%q in the daemon's log", prefix), func() error {
		if r = d.log.record(prefix); r != nil {
			return nil
		}
		select {
		case err := <-d.done:
			d.done <- err
			t.Fatalf("the daemon ended (%v) before logging %q:\n%s", err, prefix, d.log.String())
		default:
		}
		return errors.New("the log so far:\n" + d.log.String())
	})
	return r
}

// daemon is a worker or coordinator command running in this process until
// stop, with JSON logs.
type daemon struct {
	log    *logBuffer
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

func startDaemon(t *testing.T, args ...string) *daemon {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	d := &daemon{log: &logBuffer{}, cancel: cancel, done: make(chan error, 1)}
	root := newRoot(io.Discard, d.log)
	root.SetArgs(append(args, "--log-format", "json"))
	go func() { d.done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() { _ = d.stop() }) // how it ended is the test's to ask, by stop
	return d
}

// stop cancels the daemon and returns how its command ended.
func (d *daemon) stop() error {
	d.once.Do(func() {
		d.cancel()
		d.err = <-d.done
	})
	return d.err
}
