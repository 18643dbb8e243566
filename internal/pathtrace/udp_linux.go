package pathtrace

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"

	"golang.org/x/sys/unix"
)

// udpProber is an unprivileged UDP socket bound to the flow's source that
// sends every probe to the flow's destination, so each carries the flow's
// 5-tuple, and the kernel hands the socket the ICMP errors its probes
// provoke (the quoted UDP header names the socket) on its error queue.
//
// It is not connected: connecting gives a UDP socket a random flow hash
// (sk_txhash) that its packets carry, and a Linux router in the same kernel
// (a namespace lab, a node routing its pods with ECMP) hashes on that
// instead of the 5-tuple, so the probes would not follow the flow.
type udpProber struct {
	ctx   context.Context
	fd    int
	v6    bool
	dst   netip.AddrPort
	to    unix.Sockaddr // dst
	wake  *waker
	nonce uint32 // tells this trace's probes from a stale socket's
	seq   uint32
	buf   [1500]byte
	oob   [512]byte
}

func openProber(ctx context.Context, f Flow) (prober, Flow, error) {
	dst := netip.AddrPortFrom(f.Dst, f.DstPort)
	p := &udpProber{ctx: ctx, v6: f.Src.Is6(), dst: dst, to: sockaddr(dst), nonce: rand.Uint32()}
	family, level, recverr := unix.AF_INET, unix.IPPROTO_IP, unix.IP_RECVERR
	if p.v6 {
		family, level, recverr = unix.AF_INET6, unix.IPPROTO_IPV6, unix.IPV6_RECVERR
	}
	fd, err := unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.IPPROTO_UDP)
	if err != nil {
		return nil, f, fmt.Errorf("pathtrace: open a UDP socket: %w", err)
	}
	p.fd = fd
	opened := false
	defer func() {
		if !opened {
			unix.Close(fd)
		}
	}()
	if err := unix.SetsockoptInt(fd, level, recverr, 1); err != nil {
		return nil, f, fmt.Errorf("pathtrace: enable the socket's error queue (IP_RECVERR): %w: this kernel or sandbox does not hand ICMP errors to UDP sockets, so no hop can be named", err)
	}
	if err := unix.Bind(fd, sockaddr(netip.AddrPortFrom(f.Src, f.SrcPort))); err != nil {
		return nil, f, bindError(f, err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return nil, f, fmt.Errorf("pathtrace: read the socket's source port: %w", err)
	}
	f.SrcPort = addrPort(sa).Port()
	if p.wake, err = newWaker(ctx); err != nil {
		return nil, f, err
	}
	opened = true
	return p, f, nil
}

// bindError says why the flow's source is not ours to send from.
func bindError(f Flow, err error) error {
	switch {
	case errors.Is(err, unix.EADDRINUSE):
		return fmt.Errorf("pathtrace: source port %d on %s is in use by another socket: the trace needs that exact port to keep the flow's 5-tuple; wait until it is free (ss -uanp 'sport = :%d' names its owner)", f.SrcPort, f.Src, f.SrcPort)
	case errors.Is(err, unix.EADDRNOTAVAIL):
		return fmt.Errorf("pathtrace: source %s is not an address of this network namespace: trace from the node or pod whose GID it is", f.Src)
	case errors.Is(err, unix.EACCES):
		return fmt.Errorf("pathtrace: binding source port %d needs CAP_NET_BIND_SERVICE (it is below net.ipv4.ip_unprivileged_port_start): RoCE source ports are 49152 and up", f.SrcPort)
	}
	return fmt.Errorf("pathtrace: bind the source %s: %w", netip.AddrPortFrom(f.Src, f.SrcPort), err)
}

func (p *udpProber) setTTL(ttl int) error {
	level, opt := unix.IPPROTO_IP, unix.IP_TTL
	if p.v6 {
		level, opt = unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS
	}
	if err := unix.SetsockoptInt(p.fd, level, opt, ttl); err != nil {
		return fmt.Errorf("pathtrace: set the probe's TTL to %d: %w", ttl, err)
	}
	return nil
}

// send writes one probe. A first failure may be an earlier probe's late
// ICMP answer, which the kernel reports as the socket's pending error on
// the next send: the error queue is drained (clearing it) and the probe
// sent again; a second failure is this send's own.
func (p *udpProber) send(b []byte) error {
	for try := 0; ; try++ {
		err := unix.Sendto(p.fd, b, 0, p.to)
		switch {
		case err == nil:
			return nil
		case try == 0:
			p.drain()
		case errors.Is(err, unix.ENETUNREACH):
			return fmt.Errorf("pathtrace: no route to %s in this network namespace: trace from the node or pod that sends the flow", p.dst.Addr())
		case errors.Is(err, unix.EPERM):
			return fmt.Errorf("pathtrace: sending to %s is refused by this host's firewall (an nftables or iptables output rule): allow UDP to port %d", p.dst, p.dst.Port())
		default:
			return fmt.Errorf("pathtrace: send a probe to %s: %w", p.dst, err)
		}
	}
}

func (p *udpProber) close() {
	p.wake.close()
	unix.Close(p.fd)
}

func sockaddr(ap netip.AddrPort) unix.Sockaddr {
	if ap.Addr().Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
}

func addrPort(sa unix.Sockaddr) netip.AddrPort {
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), uint16(sa.Port))
	}
	return netip.AddrPort{}
}
