package idle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/rdmamesh/rdmamesh/internal/member"
)

// pool is the simulated peers: real memberlist members, each configured by
// member.Config with the LAN timers a worker runs (probe every second,
// gossip to 3 members every 200 ms, push/pull every 30 s scaled by
// log2 N, compression on, the gossip key when there is one), so what
// reaches the measured worker is what 1,023 real workers would send it.
type pool struct {
	peers   []*memberlist.Memberlist
	nets    []*peerNet
	traffic *Traffic
}

// poolTune is where the peers differ from a worker's LAN config, each
// for a reason that leaves the idle traffic the worker sees as it is:
//
//   - no probing among the peers (an interval of a day: memberlist's Ping
//     needs a non-zero one). The pinger sends the worker the probes a
//     LAN pool sends it; a thousand members probing each other every
//     second on a busy 2-core host time out whenever the host is busy,
//     and the suspicions and refutations that follow are gossip a healthy
//     pool does not send, onto the worker too.
//   - bigger UDP packets (loopback has no 1,400-byte MTU), so the join
//     gossip dropped while the pool forms (join) drains in a few dozen
//     packets a peer; an idle pool's pings and acks are far below either
//     size.
//   - compression as asked (Config.PeerCompression; LAN's default is on):
//     on, every push/pull of the pool's 1,024-member state, and every
//     packet of the dropped join gossip, is lzw-compressed (about 20 MB/s
//     on this host) and the pool takes minutes longer to form. What it
//     changes for the worker (decompressing the pool's pings, acks and
//     push/pulls) is what `make idle-cost IDLE_ARGS=-peer-compression`
//     measures.
func poolTune(compress bool) func(*memberlist.Config) {
	return func(c *memberlist.Config) {
		c.ProbeInterval = 24 * time.Hour
		c.UDPBufferSize = 60_000
		c.EnableCompression = compress
	}
}

// peerMeta is a peer's gossip metadata: what a worker with 8 usable ports
// publishes (worker/delegate.go), with an address of a real node's length.
// Nothing in the pool dials it; only a coordinator fetches inventories.
type peerMeta []byte

func (d peerMeta) NodeMeta(limit int) []byte {
	if len(d) > limit {
		return nil
	}
	return d
}
func (peerMeta) NotifyMsg([]byte)                           {}
func (peerMeta) GetBroadcasts(overhead, limit int) [][]byte { return nil }
func (peerMeta) LocalState(join bool) []byte                { return nil }
func (peerMeta) MergeRemoteState(buf []byte, join bool)     {}

// startPool creates n peers; join joins them.
func startPool(n int, key []byte, compress bool) (_ *pool, err error) {
	p := &pool{traffic: &Traffic{}}
	defer func() {
		if err != nil {
			p.stop()
		}
	}()
	ports := make(map[int]bool, n)
	for range n {
		t, err := listenPeer(p.traffic)
		if err != nil {
			return nil, err
		}
		p.nets = append(p.nets, t)
		ports[t.port] = true
	}
	// Every peer's port is known before any packet flows: the map is only
	// read from here on.
	isPeer := func(port int) bool { return ports[port] }
	for i, t := range p.nets {
		t.serve(isPeer)
		meta, err := member.Meta{Role: member.RoleWorker, APIAddr: fmt.Sprintf("10.%d.%d.%d:7947", 1+i>>16, (i>>8)&255, i&255),
			Generation: uint64(time.Now().UnixNano()), Ports: 8, Provider: "sim"}.Encode()
		if err != nil {
			return nil, err
		}
		cfg, err := member.Config(member.Options{Name: peerName(i), Transport: t, LAN: true, Delegate: peerMeta(meta), Key: key, Tune: poolTune(compress)})
		if err != nil {
			return nil, err
		}
		m, err := memberlist.Create(cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", peerName(i), err)
		}
		p.peers = append(p.peers, m)
	}
	return p, nil
}

// join forms the pool: every peer exchanges state with the first (the
// hub) twice, eight at a time. The first round teaches the hub every peer,
// the second every peer the whole pool, so nobody needs the gossip of the
// joins, and it is dropped: each peer learned N-1 members at once and
// queued an alive message for each, to send 4 x log10(N+1) times; the
// pool would decode 12.6 M of them at 1,024, all news it already has,
// and on a busy 2-core host that took longer than everything else. Once
// the peers' queues are empty (quiet on the dropped count), deliver starts
// delivering, and the pool is what a formed LAN pool is: every member
// alive in every view, nothing left to gossip.
func (p *pool) join(ctx context.Context, say func(string, ...any)) error {
	p.traffic.Drop.Store(true)
	for round := range 2 {
		start := time.Now()
		if err := joinAll(ctx, p.peers[1:], p.hub()); err != nil {
			return err
		}
		say("join round %d of 2: %d peers exchanged state with the hub in %s", round+1, len(p.peers)-1, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// deliver ends the formation: UDP is delivered from now on.
func (p *pool) deliver() { p.traffic.Drop.Store(false) }

func peerName(i int) string { return fmt.Sprintf("node-%04d", i+1) }

// hub is the address every peer joined through; the worker joins it too.
func (p *pool) hub() string { return p.peers[0].LocalNode().Address() }

// joinAll has each of ms exchange state with seed, eight at a time, each
// retried a few times (a busy hub may time a stream out).
func joinAll(ctx context.Context, ms []*memberlist.Memberlist, seed string) error {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	errs := make([]error, len(ms))
	for i, m := range ms {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			for range 5 {
				if _, errs[i] = m.Join([]string{seed}); errs[i] == nil || ctx.Err() != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// seen is the fewest and the most alive members any peer sees.
func (p *pool) seen() (lo, hi int) {
	lo = len(p.peers) + 1
	for _, m := range p.peers {
		k := m.NumMembers()
		lo, hi = min(lo, k), max(hi, k)
	}
	return lo, hi
}

// stop shuts every peer down without a leave: a thousand leave messages
// would be a storm of their own, and nobody is left to read them.
func (p *pool) stop() {
	for _, m := range p.peers {
		_ = m.Shutdown()
	}
	for _, t := range p.nets[len(p.peers):] {
		_ = t.Shutdown() // listening, never handed to a memberlist
	}
}
