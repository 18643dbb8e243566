package pathtrace

import (
	"context"
	"fmt"
	"time"
)

// Hop loss: a trace names the hops; repeating its probes many times at
// each TTL measures how many of them each hop answers. A link that drops
// packets drops the probes that cross it, so the hops past it answer less
// than the hop before it, while a hop whose ICMP policer drops answers
// hurts only its own count (the hops after it answer again). The flow's
// 5-tuple stays the same, so every probe crosses the flow's own links.

// HopCount is what one TTL's repeated probes met.
type HopCount struct {
	TTL      int `json:"ttl"`
	Sent     int `json:"sent"`
	Answered int `json:"answered"`
}

// Defaults of LossOptions. DefaultLossPacing is 500 probes a second: hop
// loss needs hundreds of answers a hop, which a switch whose ICMP policer
// allows only a few a second cannot give (its every hop then shows the
// same high loss, which says nothing about a link and is reported so).
const (
	DefaultLossProbes  = 300
	DefaultLossPacing  = 2 * time.Millisecond
	DefaultLossTimeout = 200 * time.Millisecond
	DefaultLossBudget  = 45 * time.Second
	MaxLossProbes      = 5000
)

// LossOptions bound a hop-loss measurement. The zero value takes every
// default.
type LossOptions struct {
	Probes  int           // probes per TTL
	Pacing  time.Duration // least time between two probes of this process (its own pacer: traces keep theirs)
	Timeout time.Duration // how long one probe waits before it counts as unanswered
	Budget  time.Duration // the whole measurement's bound: counts so far are kept
}

func (o LossOptions) withDefaults() LossOptions {
	if o.Probes == 0 {
		o.Probes = DefaultLossProbes
	}
	if o.Pacing == 0 {
		o.Pacing = DefaultLossPacing
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultLossTimeout
	}
	if o.Budget == 0 {
		o.Budget = DefaultLossBudget
	}
	return o
}

// Validate names the first option out of range.
func (o LossOptions) Validate() error {
	o = o.withDefaults()
	switch {
	case o.Probes < 1 || o.Probes > MaxLossProbes:
		return fmt.Errorf("pathtrace: LossOptions.Probes %d: want 1..%d (0 = %d)", o.Probes, MaxLossProbes, DefaultLossProbes)
	case o.Pacing < 0:
		return fmt.Errorf("pathtrace: LossOptions.Pacing %v: want a positive interval (0 = %v)", o.Pacing, DefaultLossPacing)
	case o.Timeout < time.Millisecond:
		return fmt.Errorf("pathtrace: LossOptions.Timeout %v: want at least 1ms (0 = %v)", o.Timeout, DefaultLossTimeout)
	case o.Budget < o.Timeout:
		return fmt.Errorf("pathtrace: LossOptions.Budget %v is shorter than one probe's Timeout %v: raise Budget (0 = %v)", o.Budget, o.Timeout, DefaultLossBudget)
	}
	return nil
}

// MeasureLoss probes f at TTL 1..ttls, o.Probes times each, and counts
// the answers per TTL. The TTLs take turns (1, 2, …, ttls, 1, 2, …) so a
// burst of loss or a busy policer falls on every hop alike. ttls is the
// trace's known hops: past the last switch the destination drops the
// probes, which is no loss. Errors are local failures and bad options;
// when the budget or ctx ends early the counts so far come back with the
// error.
func MeasureLoss(ctx context.Context, f Flow, ttls int, o LossOptions) ([]HopCount, error) {
	f = f.normal()
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("pathtrace: %w", err)
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if ttls < 1 || ttls > 255 {
		return nil, fmt.Errorf("pathtrace: hop loss over %d TTLs: want 1..255 (the trace's known hops)", ttls)
	}
	o = o.withDefaults()
	ctx, cancel := context.WithTimeoutCause(ctx, o.Budget, fmt.Errorf("the hop-loss measurement's time bound (Budget %v) ran out", o.Budget))
	defer cancel()
	p, _, err := openProber(ctx, f)
	if err != nil {
		return nil, err
	}
	defer p.close()
	return countLoss(ctx, p, ttls, o, lossPacerFor(o.Pacing))
}

// countLoss sends the probes round by round; a round is one probe per TTL.
func countLoss(ctx context.Context, p prober, ttls int, o LossOptions, pace *pacer) ([]HopCount, error) {
	out := make([]HopCount, ttls)
	for i := range out {
		out[i].TTL = i + 1
	}
	for range o.Probes {
		for i := range out {
			if err := pace.wait(ctx); err != nil {
				return out, context.Cause(ctx)
			}
			_, ok, err := p.probe(i+1, o.Timeout)
			if err != nil {
				return out, err
			}
			out[i].Sent++
			if ok {
				out[i].Answered++
			}
		}
	}
	return out, nil
}
