package scale

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
)

// gossipMeter counts the packets the simulated workers send.
type gossipMeter struct{ packets atomic.Int64 }

// countingTransport is a worker's MockTransport with its sends counted. It
// embeds the mock so memberlist still sees a NodeAwareTransport.
type countingTransport struct {
	*memberlist.MockTransport
	m *gossipMeter
}

func (t *countingTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	t.m.packets.Add(1)
	return t.MockTransport.WriteTo(b, addr)
}

func (t *countingTransport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	t.m.packets.Add(1)
	return t.MockTransport.WriteToAddress(b, a)
}

func (m *gossipMeter) wrap(t *memberlist.MockTransport) memberlist.Transport {
	return &countingTransport{MockTransport: t, m: m}
}

// settle waits until the workers' join broadcasts have been sent out: a
// quiet worker sends only its probe (a ping and an ack every 5 s, 0.4
// packets a second), while one with broadcasts queued gossips to 3 peers
// every second. It returns how long that took and whether it got there
// before limit.
func (m *gossipMeter) settle(ctx context.Context, nodes int, limit time.Duration) (time.Duration, bool) {
	start := time.Now()
	quiet := int64(nodes) // packets a second; 2.5 x the probes alone
	last, since := m.packets.Load(), time.Now()
	settled := false
	_ = poll(ctx, 250*time.Millisecond, func() (bool, error) {
		if el := time.Since(since); el >= time.Second {
			now := m.packets.Load()
			rate := float64(now-last) / el.Seconds()
			last, since = now, time.Now()
			settled = rate <= float64(quiet)
		}
		return settled || time.Since(start) > limit, nil
	})
	return time.Since(start), settled
}
