package lldp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Conn is an AF_PACKET socket that receives the LLDP frames arriving on one
// interface. It belongs to the network namespace it was opened in.
type Conn struct {
	Interface string
	f         *os.File
	rc        syscall.RawConn
	buf       []byte
}

// maxFrame bounds a read; 802.1AB keeps an LLDPDU within one untagged
// 1500-byte payload, so a jumbo-sized buffer never truncates one.
const maxFrame = 9216

// Open listens for LLDP on ifname. It needs CAP_NET_RAW (a *PermissionError
// says so). The socket joins LLDP's multicast groups on the interface, as
// a NIC's address filter may otherwise drop those frames in hardware.
func Open(ifname string) (*Conn, error) {
	ifi, err := net.InterfaceByName(ifname)
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err.Error() == "no such network interface" {
		return nil, fmt.Errorf("listen for LLDP on %s: no such interface in this network namespace", ifname)
	}
	if err != nil {
		return nil, fmt.Errorf("listen for LLDP on %s: %w", ifname, err)
	}
	// Protocol 0 here and the real one at bind: a socket created for
	// 0x88cc hears every interface until bind narrows it to one.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return nil, &PermissionError{Interface: ifname, Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("listen for LLDP on %s: AF_PACKET socket: %w", ifname, err)
	}
	if err := setup(fd, ifi.Index); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("listen for LLDP on %s: %w", ifname, err)
	}
	f := os.NewFile(uintptr(fd), "lldp "+ifname)
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("listen for LLDP on %s: %w", ifname, err)
	}
	return &Conn{Interface: ifname, f: f, rc: rc, buf: make([]byte, maxFrame)}, nil
}

func setup(fd, ifindex int) error {
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(EtherType), Ifindex: ifindex}); err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	for _, m := range Multicast {
		mr := unix.PacketMreq{Ifindex: int32(ifindex), Type: unix.PACKET_MR_MULTICAST, Alen: uint16(len(m))}
		copy(mr.Address[:], m)
		if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mr); err != nil {
			return fmt.Errorf("join multicast group %s: %w", m, err)
		}
	}
	return nil
}

// htons puts a 16-bit value in network byte order, as sockaddr_ll wants it.
func htons(v uint16) uint16 {
	return binary.NativeEndian.Uint16(binary.BigEndian.AppendUint16(nil, v))
}

// Read returns the next LLDP announcement received on the interface. The
// host's own announcements (its lldpd's) never reach it: the kernel hands
// outgoing frames only to sockets bound to every protocol, not to one
// bound to LLDP's. A frame that is not a valid LLDPDU is returned as a
// *MalformedError, after which Read may be called again. Read ends with
// ctx.Err() when ctx ends.
func (c *Conn) Read(ctx context.Context) (Neighbor, error) {
	// A deadline left by an earlier Read's context would end this one.
	if err := c.f.SetReadDeadline(time.Time{}); err != nil {
		return Neighbor{}, fmt.Errorf("read LLDP on %s: %w", c.Interface, err)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.f.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	var n int
	var rerr error
	err := c.rc.Read(func(fd uintptr) bool {
		n, _, rerr = unix.Recvfrom(int(fd), c.buf, unix.MSG_TRUNC)
		return !errors.Is(rerr, unix.EAGAIN)
	})
	if ctx.Err() != nil {
		return Neighbor{}, ctx.Err()
	}
	if err == nil {
		err = rerr
	}
	if err != nil {
		return Neighbor{}, fmt.Errorf("read LLDP on %s: %w", c.Interface, err)
	}
	if n > len(c.buf) {
		return Neighbor{}, &MalformedError{Interface: c.Interface, Err: fmt.Errorf("frame of %d bytes, larger than any LLDPDU", n)}
	}
	du, src, err := ParseFrame(c.buf[:n])
	if err != nil {
		return Neighbor{}, &MalformedError{Interface: c.Interface, From: src.String(), Err: err}
	}
	return du.Neighbor(c.Interface, src, time.Now()), nil
}

// Close stops listening; a Read in progress returns.
func (c *Conn) Close() error { return c.f.Close() }
