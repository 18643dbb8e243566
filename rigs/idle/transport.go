package idle

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
)

// The peers listen on peerIP and dial from dialIP, both loopback: a TCP
// connection accepted from anywhere else, and a packet from a port that is
// no peer's, is the measured worker's. That is how the pool counts the
// worker's gossip without a single lookup that could race a dial.
var (
	peerIP = netip.MustParseAddr("127.0.0.1")
	dialIP = netip.MustParseAddr("127.0.0.3")
)

// Traffic counts the gossip between the pool and the measured worker, as
// the pool's sockets see it: UDP (probes, acks, gossip) and TCP streams,
// told apart at their close by size (pushPullMin): a push/pull carries
// the pool's state, a TCP ping (memberlist's fallback when a UDP probe
// goes unanswered) a ping and an ack.
type Traffic struct {
	PacketsIn, BytesIn      atomic.Int64 // UDP the worker received from the pool
	PacketsOut, BytesOut    atomic.Int64 // UDP the worker sent to the pool
	PushPullsIn, PushPulls  atomic.Int64 // push/pulls a peer started with the worker / it started
	StreamBytes             atomic.Int64 // TCP bytes both ways on those
	TCPPingsIn, TCPPingsOut atomic.Int64 // fallback pings: from a peer to it / from it to a peer
	PoolPackets             atomic.Int64 // every UDP packet the peers sent, the worker's included
	// Drop discards what the peers send over UDP (counted in PoolPackets
	// still) while the pool forms: see pool.join.
	Drop atomic.Bool
}

// TrafficSnap is Traffic at one moment.
type TrafficSnap struct {
	PacketsIn, BytesIn, PacketsOut, BytesOut, PushPullsIn, PushPulls, StreamBytes, TCPPingsIn, TCPPingsOut, PoolPackets int64
}

// Snap reads the counters.
func (t *Traffic) Snap() TrafficSnap {
	return TrafficSnap{t.PacketsIn.Load(), t.BytesIn.Load(), t.PacketsOut.Load(), t.BytesOut.Load(), t.PushPullsIn.Load(),
		t.PushPulls.Load(), t.StreamBytes.Load(), t.TCPPingsIn.Load(), t.TCPPingsOut.Load(), t.PoolPackets.Load()}
}

// Sub is the difference s - o.
func (s TrafficSnap) Sub(o TrafficSnap) TrafficSnap {
	return TrafficSnap{s.PacketsIn - o.PacketsIn, s.BytesIn - o.BytesIn, s.PacketsOut - o.PacketsOut, s.BytesOut - o.BytesOut,
		s.PushPullsIn - o.PushPullsIn, s.PushPulls - o.PushPulls, s.StreamBytes - o.StreamBytes, s.TCPPingsIn - o.TCPPingsIn,
		s.TCPPingsOut - o.TCPPingsOut, s.PoolPackets - o.PoolPackets}
}

// peerNet is a peer's memberlist transport: UDP and TCP on one loopback
// port, as memberlist's NetTransport, except that a packet is read into
// one reused buffer and copied out at its size. NetTransport reads each
// into a fresh 64 KB buffer that the messages queued from it keep alive;
// a thousand peers in one process would pin gigabytes in a join. The
// measured worker runs the real NetTransport.
type peerNet struct {
	udp     *net.UDPConn
	tcp     *net.TCPListener
	port    int
	isPeer  func(port int) bool // read only once the pool is built
	traffic *Traffic
	packets chan *memberlist.Packet
	streams chan net.Conn
	done    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
}

var _ memberlist.Transport = (*peerNet)(nil)

// listenPeer binds a loopback port for both UDP and TCP; the readers start
// with serve, once the pool knows every peer's port.
func listenPeer(tr *Traffic) (*peerNet, error) {
	for range 20 {
		tcp, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(netip.AddrPortFrom(peerIP, 0)))
		if err != nil {
			return nil, fmt.Errorf("peer listen: %w", err)
		}
		port := tcp.Addr().(*net.TCPAddr).Port
		udp, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(peerIP, uint16(port))))
		if err != nil {
			tcp.Close() // the same UDP port is taken: try another
			continue
		}
		return &peerNet{udp: udp, tcp: tcp, port: port, traffic: tr, packets: make(chan *memberlist.Packet),
			streams: make(chan net.Conn), done: make(chan struct{})}, nil
	}
	return nil, errors.New("peer listen: no loopback port free for both TCP and UDP in 20 tries")
}

func (t *peerNet) serve(isPeer func(int) bool) {
	t.isPeer = isPeer
	t.wg.Add(2)
	go t.readUDP()
	go t.acceptTCP()
}

func (t *peerNet) FinalAdvertiseAddr(string, int) (net.IP, int, error) {
	return peerIP.AsSlice(), t.port, nil
}

func (t *peerNet) WriteTo(b []byte, addr string) (time.Time, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return time.Time{}, err
	}
	t.traffic.PoolPackets.Add(1)
	if t.traffic.Drop.Load() {
		return time.Now(), nil
	}
	if !t.isPeer(int(ap.Port())) {
		t.traffic.PacketsIn.Add(1)
		t.traffic.BytesIn.Add(int64(len(b)))
	}
	_, err = t.udp.WriteToUDPAddrPort(b, ap)
	return time.Now(), err
}

func (t *peerNet) PacketCh() <-chan *memberlist.Packet { return t.packets }

func (t *peerNet) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(dialIP, 0))}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	if ap, err := netip.ParseAddrPort(addr); err == nil && !t.isPeer(int(ap.Port())) {
		return &countedConn{Conn: c, t: t.traffic, pushPulls: &t.traffic.PushPullsIn, pings: &t.traffic.TCPPingsIn}, nil
	}
	return c, nil
}

func (t *peerNet) StreamCh() <-chan net.Conn { return t.streams }

func (t *peerNet) Shutdown() error {
	t.once.Do(func() {
		close(t.done)
		t.udp.Close()
		t.tcp.Close()
	})
	t.wg.Wait()
	return nil
}

func (t *peerNet) readUDP() {
	defer t.wg.Done()
	buf := make([]byte, 65536)
	for {
		n, from, err := t.udp.ReadFromUDPAddrPort(buf)
		now := time.Now()
		if err != nil {
			select {
			case <-t.done:
				return
			default:
				continue
			}
		}
		if n == 0 {
			continue
		}
		if !t.isPeer(int(from.Port())) {
			t.traffic.PacketsOut.Add(1)
			t.traffic.BytesOut.Add(int64(n))
		}
		select {
		case t.packets <- &memberlist.Packet{Buf: slices.Clone(buf[:n]), From: net.UDPAddrFromAddrPort(from), Timestamp: now}:
		case <-t.done:
			return
		}
	}
}

func (t *peerNet) acceptTCP() {
	defer t.wg.Done()
	for {
		c, err := t.tcp.AcceptTCP()
		if err != nil {
			select {
			case <-t.done:
				return
			case <-time.After(10 * time.Millisecond): // a transient error (EMFILE): do not spin
				continue
			}
		}
		var conn net.Conn = c
		if c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap() != dialIP {
			conn = &countedConn{Conn: c, t: t.traffic, pushPulls: &t.traffic.PushPulls, pings: &t.traffic.TCPPingsOut}
		}
		select {
		case t.streams <- conn:
		case <-t.done:
			c.Close()
			return
		}
	}
}

// countedConn counts a stream with the worker: its bytes, and at its
// close whether it was a push/pull or a TCP ping.
type countedConn struct {
	net.Conn
	t                *Traffic
	pushPulls, pings *atomic.Int64
	n                atomic.Int64
	once             sync.Once
}

// pushPullMin tells the two kinds of stream apart: a TCP ping and its
// ack are under 250 bytes together, encrypted or not; a push/pull carries
// every member's state each way, some 150 bytes a member with a worker's
// metadata, so over 600 bytes in a pool of two.
const pushPullMin = 400

func (c *countedConn) Read(b []byte) (int, error) {
	k, err := c.Conn.Read(b)
	c.n.Add(int64(k))
	return k, err
}

func (c *countedConn) Write(b []byte) (int, error) {
	k, err := c.Conn.Write(b)
	c.n.Add(int64(k))
	return k, err
}

func (c *countedConn) Close() error {
	c.once.Do(func() {
		n := c.n.Load()
		c.t.StreamBytes.Add(n)
		if n >= pushPullMin {
			c.pushPulls.Add(1)
		} else {
			c.pings.Add(1)
		}
	})
	return c.Conn.Close()
}
