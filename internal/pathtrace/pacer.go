package pathtrace

import (
	"context"
	"sync"
	"time"
)

// pacer spaces probes: a token bucket one token deep that fills every
// interval, shared by every trace that waits on it.
type pacer struct {
	every time.Duration
	mu    sync.Mutex
	next  time.Time // when the next token is due
}

// newPacer lets one probe through every interval.
func newPacer(every time.Duration) *pacer { return &pacer{every: every} }

// wait takes a token, waiting for it when the last was taken less than an
// interval ago; it returns ctx's error if ctx ends first.
func (p *pacer) wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	now := time.Now()
	at := p.next
	if at.Before(now) {
		at = now
	}
	p.next = at.Add(p.every)
	p.mu.Unlock()
	if !at.After(now) {
		return nil
	}
	t := time.NewTimer(at.Sub(now))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		p.mu.Lock()
		// Hand the token back when nobody queued behind it, so a cancelled
		// trace does not slow the next one.
		if p.next.Equal(at.Add(p.every)) {
			p.next = at
		}
		p.mu.Unlock()
		return ctx.Err()
	}
}

// pacers are the process's pacers, one per interval, so every trace with
// the same Options.Pacing takes turns on one. lossPacers are apart: a
// hop-loss run paces at its own, faster rate and must not hold up the
// traces queued behind it, nor they it.
var pacers, lossPacers sync.Map // time.Duration → *pacer

func pacerFor(every time.Duration) *pacer { return pacerIn(&pacers, every) }

func lossPacerFor(every time.Duration) *pacer { return pacerIn(&lossPacers, every) }

func pacerIn(m *sync.Map, every time.Duration) *pacer {
	if p, ok := m.Load(every); ok {
		return p.(*pacer)
	}
	p, _ := m.LoadOrStore(every, newPacer(every))
	return p.(*pacer)
}
