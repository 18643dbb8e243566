package procstat

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Guard is a run's own memory brake on a shared machine: it samples the
// resident set of this process, and of the children it is told about,
// and reports a breach once their sum passes Limit, so a runaway run ends
// as an error naming who held what instead of as the kernel's OOM kill of
// whatever is biggest (another session's work, maybe). debug.SetMemoryLimit
// only makes the collector try harder; it never stops a run.
type Guard struct {
	Limit    uint64                // bytes; 0 samples (for Peak) but never breaches
	Every    time.Duration         // 0 = 250 ms
	Children func() map[string]int // name → pid of the children to count; nil = none
	Name     string                // how a breach names this process; "" = "this process"

	mu   sync.Mutex
	peak uint64
}

// BreachError is a Guard's finding: the sum and each process's part.
type BreachError struct {
	Sum, Limit uint64
	Parts      []string // "this process 812 MB", "worker-3 95 MB", ...
}

func (e *BreachError) Error() string {
	return fmt.Sprintf("memory guard: resident memory %s passed the limit %s (%s): run stopped", MB(e.Sum), MB(e.Limit), strings.Join(e.Parts, ", "))
}

// Watch samples until ctx ends (nil) or the sum passes Limit (a
// *BreachError). Run it in its own goroutine and act on its result.
func (g *Guard) Watch(ctx context.Context) error {
	every := g.Every
	if every <= 0 {
		every = 250 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := g.Check(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Check samples once.
func (g *Guard) Check() error {
	self, name := RSS(Self), g.Name
	if name == "" {
		name = "this process"
	}
	sum, parts := self, []string{name + " " + MB(self)}
	if g.Children != nil {
		kids := g.Children()
		names := make([]string, 0, len(kids))
		for name := range kids {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if pid := kids[name]; pid > 0 {
				r := RSS(pid)
				sum += r
				parts = append(parts, name+" "+MB(r))
			}
		}
	}
	g.mu.Lock()
	g.peak = max(g.peak, sum)
	g.mu.Unlock()
	if g.Limit > 0 && sum > g.Limit {
		return &BreachError{Sum: sum, Limit: g.Limit, Parts: parts}
	}
	return nil
}

// Peak is the highest sum sampled.
func (g *Guard) Peak() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.peak
}

// Start runs Watch in a goroutine that calls onBreach once on a breach;
// stop ends it and returns the peak and the breach, if there was one.
func (g *Guard) Start(ctx context.Context, onBreach func(error)) (stop func() (peak uint64, breach error)) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var hit error
	go func() {
		defer close(done)
		if hit = g.Watch(ctx); hit != nil && onBreach != nil {
			onBreach(hit)
		}
	}()
	return func() (uint64, error) {
		cancel()
		<-done
		return g.Peak(), hit
	}
}
