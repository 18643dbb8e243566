package idle

import (
	"context"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
)

// pinger sends the measured worker the probes a LAN pool sends it. Each
// member of a pool of N probes one other member every probe interval,
// going round a shuffled list, so the worker is probed by N-1 members
// once each per N-1 intervals: one ping per interval whatever N is. The
// peers do not probe (poolTune); here a random peer pings the worker once
// an interval, with memberlist's own ping (same packet, same encryption
// and compression as its probe).
type pinger struct {
	cancel              context.CancelFunc
	done                chan struct{}
	sent, acked, missed atomic.Int64
}

func startPinger(ctx context.Context, peers []*memberlist.Memberlist, addr net.Addr, every time.Duration) *pinger {
	ctx, cancel := context.WithCancel(ctx)
	p := &pinger{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		var wg sync.WaitGroup
		defer wg.Wait()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			from := peers[rand.IntN(len(peers))]
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.sent.Add(1)
				// Ping waits for the ack up to the probe timeout.
				if _, err := from.Ping(workerName, addr); err != nil {
					p.missed.Add(1)
					return
				}
				p.acked.Add(1)
			}()
		}
	}()
	return p
}

func (p *pinger) stop() {
	p.cancel()
	<-p.done
}
