package sim

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"time"
)

// tailShare is how often a healthy iteration hits a stall (an interrupt, a
// cache or TLB miss, PCIe credit wait). It is below 1%, so it shapes p99.9
// and max but leaves p99 on the body, as ib_write_lat shows on a quiet node.
const tailShare = 0.002

// latencySamples draws n one-way samples around oneWay (already multiplied
// by the path's lat factor). A million samples cost tens of milliseconds,
// so it looks at ctx now and then to stay cancellable.
func latencySamples(ctx context.Context, rng *rand.Rand, n int, oneWay, jitter float64, e Effects) ([]float64, error) {
	out := make([]float64, n)
	for i := range out {
		if i%(1<<14) == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// g + 0.6(g²-1) keeps the mean at oneWay but skews right: the
		// minimum sits just under the typical value and the spread is above
		// it, like real ping-pong histograms.
		g := rng.NormFloat64()
		v := oneWay * (1 + jitter*(g+0.6*(g*g-1)))
		if rng.Float64() < tailShare {
			v *= 1.3 + 0.7*rng.ExpFloat64()
		}
		// A lost packet in a ping-pong is recovered by retransmission after
		// a NAK or a short timeout: tens of round trips, not a failure.
		if e.Loss > 0 && rng.Float64() < e.Loss/20 {
			v += oneWay * (20 + 40*rng.Float64())
		}
		out[i] = v
	}
	if t := e.tailFactor(); t > 1 {
		// Multiply exactly the samples at or above probe.Summarize's
		// nearest-rank p99, so tail=Nx moves p99, p99.9 and max and leaves
		// p50/p90 alone.
		sort.Float64s(out)
		from := int(math.Ceil(0.99*float64(n))) - 1
		for i := max(from, 0); i < n; i++ {
			out[i] *= t
		}
	}
	return out, nil
}

// seconds converts a modelled duration, clamped so absurd fault factors
// cannot overflow time.Duration; anything that long times out anyway.
func seconds(s float64) time.Duration {
	const limit = 24 * time.Hour
	if !(s < limit.Seconds()) {
		return limit
	}
	return time.Duration(s * float64(time.Second))
}

// wait spends modelled time d in wall time scaled by TimeScale, never more
// than limit, and gives up when ctx ends.
func (f *Fabric) wait(ctx context.Context, d, limit time.Duration) error {
	w := limit
	if wf := float64(d) * f.scale; wf < float64(limit) {
		w = time.Duration(wf)
	}
	if w <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(w)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// testNoise draws one test's factor for a preset whose tests spread by sd
// (log space), a twentieth of them from a tail twice as wide: emulation's
// stalls make heavier tails than a normal's.
func testNoise(rng *rand.Rand, sd float64) float64 {
	g := rng.NormFloat64() * sd
	if rng.Float64() < 0.05 {
		g *= 2
	}
	return math.Exp(g)
}
