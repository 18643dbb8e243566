package scale

import (
	"context"
	"errors"
	"io"
	"log"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/rdmamesh/rdmamesh/internal/member"
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

// passiveGossip is the simulated workers' gossip tuning: member.SharedHost,
// then no probing, no gossip rounds and no periodic push/pull of their own,
// and no members but the coordinators and themselves.
//
// Why: on real hosts every worker keeps the whole member list and gossips
// on its own CPU, a constant trickle whatever N is. Here N workers share two
// cores and one heap, so their views add up to N² member states: at 1,024 a
// third of the heap the harness counted as the coordinator's after the sweep
// (memberlist's aliveNode and broadcast queues, 376 MB of a 611 MB "holding"
// heap), at 4,096 several GB and minutes of CPU. A passive worker still
// joins (a push/pull with the coordinator, which learns its meta from it),
// answers the coordinator's probes and push/pulls, and refutes a suspicion
// about itself on the ack it sends back; the coordinator's own gossip runs
// its real LAN profile against N members. What the workers no longer do
// is what real hosts do elsewhere: watch each other.
func passiveGossip(keep func(name string) bool) func(*memberlist.Config) {
	return func(c *memberlist.Config) {
		member.SharedHost(c)
		c.ProbeInterval, c.GossipInterval, c.PushPullInterval = 0, 0, 0
		self := c.Name
		c.Alive = aliveFilter(func(name string) bool { return name == self || keep(name) })
		// Every refused member is one warning at debug level (dropped
		// anyway): 8 M of them at 4,096 would be formatted for nothing.
		c.LogOutput, c.Logger = nil, log.New(io.Discard, "", 0)
	}
}

// aliveFilter is a memberlist.AliveDelegate that admits only the members
// keep accepts; memberlist drops every message about the others unstored.
type aliveFilter func(name string) bool

var _ memberlist.AliveDelegate = aliveFilter(nil)

func (f aliveFilter) NotifyAlive(n *memberlist.Node) error {
	if f(n.Name) {
		return nil
	}
	return errNotWatched
}

var errNotWatched = errors.New("scale: a simulated worker keeps only the coordinators as members")
