package chaos

import (
	"context"
	"fmt"
	"time"
)

// pollEvery is short enough to time a failover to a few tens of
// milliseconds and long enough not to steal CPU from the cluster on a
// 2-core machine.
const pollEvery = 25 * time.Millisecond

// waitFor polls cond until it holds, ctx ends or timeout passes. The error
// names what was awaited and the last reason cond gave.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func() (bool, string)) error {
	return waitEvery(ctx, pollEvery, timeout, what, cond)
}

// waitEvery is waitFor polling every every: for conditions whose check is
// itself costly, such as listing hundreds of nodes.
func waitEvery(ctx context.Context, every, timeout time.Duration, what string, cond func() (bool, string)) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(every)
	defer tick.Stop()
	last := ""
	for {
		ok, why := cond()
		if ok {
			return nil
		}
		if why != "" {
			last = why
		}
		if time.Now().After(deadline) {
			if last != "" {
				return fmt.Errorf("timed out after %s waiting for %s (%s)", timeout, what, last)
			}
			return fmt.Errorf("timed out after %s waiting for %s", timeout, what)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-tick.C:
		}
	}
}

// pause waits d or until ctx ends; the driver uses it only to place a fault
// at a seeded moment, never to wait for a state.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
