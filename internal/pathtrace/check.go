package pathtrace

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// Check says whether traces can run from src in this network namespace, as
// doctor asks: it traces from src to a port of src's own that nothing
// listens on, and wants the kernel's port unreachable back through the
// socket's error queue, the way every hop's answer comes.
func Check(ctx context.Context, src netip.Addr) error {
	src = src.Unmap()
	ports, err := closedPorts(src)
	if err != nil {
		return err
	}
	f := Flow{Src: src, Dst: src, SrcPort: ports[0], DstPort: ports[1]}
	p, err := Trace(ctx, f, Options{MaxTTL: 1, MaxSilent: 1, Timeout: time.Second, Pacing: time.Millisecond})
	if err != nil {
		return err
	}
	if !p.Reached || p.Hops[0].Answer != "port unreachable" {
		return fmt.Errorf("pathtrace: a probe from %s to its own closed port %d got no port unreachable back (%s): a firewall here drops ICMP or the kernel hands no ICMP errors to UDP sockets; traces would see no hop", src, f.DstPort, p.Why)
	}
	return nil
}

// closedPorts are two UDP ports of src that nothing listens on: ones the
// kernel just gave out and took back, told apart by being held at once.
func closedPorts(src netip.Addr) ([2]uint16, error) {
	var ports [2]uint16
	for i := range ports {
		c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(src, 0)))
		if err != nil {
			return ports, fmt.Errorf("pathtrace: %s is not an address of this network namespace (%w): check the address the RoCE GID carries", src, err)
		}
		defer c.Close()
		ports[i] = c.LocalAddr().(*net.UDPAddr).AddrPort().Port()
	}
	return ports, nil
}
