package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// injection is the demo's faults from After on (nil Specs: healed back to
// the --fault ones).
type injection struct {
	After time.Duration
	Specs []string
}

// parseInjections reads --inject AFTER=FAULT (or AFTER=heal) values:
// faults with the same AFTER apply together and add to the earlier ones
// until a heal.
func parseInjections(vals []string) ([]injection, error) {
	type ev struct {
		after time.Duration
		spec  string
	}
	var evs []ev
	for _, v := range vals {
		at, spec, ok := strings.Cut(v, "=")
		d, err := time.ParseDuration(strings.TrimSpace(at))
		switch {
		case !ok || strings.TrimSpace(spec) == "":
			return nil, fmt.Errorf("--inject %q: want AFTER=FAULT, e.g. 30s=node-05/mlx5_0:loss=5%% or 90s=heal", v)
		case err != nil || d < 0:
			return nil, fmt.Errorf("--inject %q: %q is not a duration after the start (e.g. 30s, 2m)", v, at)
		}
		evs = append(evs, ev{d, strings.TrimSpace(spec)})
	}
	slices.SortStableFunc(evs, func(a, b ev) int { return cmp.Compare(a.after, b.after) })
	var out []injection
	var active []string
	for i, e := range evs {
		if e.spec == "heal" {
			active = nil
		} else {
			active = append(active, e.spec)
		}
		if i+1 < len(evs) && evs[i+1].after == e.after {
			continue
		}
		out = append(out, injection{After: e.after, Specs: slices.Clone(active)})
	}
	return out, nil
}

// injector is what runInjections changes; *cluster.Cluster is one.
type injector interface {
	Inject(specs []string) error
}

// runInjections applies each injection at its time after start, until ctx
// ends. A refused injection is reported and the next still runs.
func runInjections(ctx context.Context, c injector, start time.Time, inj []injection, out io.Writer) {
	for _, in := range inj {
		t := time.NewTimer(time.Until(start.Add(in.After)))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		what := "healed: only the --fault faults remain"
		if len(in.Specs) > 0 {
			what = "faults now: " + strings.Join(in.Specs, "; ")
		}
		if err := c.Inject(in.Specs); err != nil {
			fmt.Fprintf(out, "inject at %s failed: %v\n", in.After, err)
			continue
		}
		fmt.Fprintf(out, "inject at %s: %s\n", in.After, what)
	}
}

// lockedWriter lets the injection goroutine and the sweep's progress share
// the demo's stdout.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
