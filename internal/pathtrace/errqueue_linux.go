package pathtrace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"syscall"

	"golang.org/x/sys/unix"
)

// sizeofExtendedErr is struct sock_extended_err; the offender's sockaddr
// (SO_EE_OFFENDER) follows it in the control message.
const sizeofExtendedErr = 16

// parseErr reads one error-queue message: data is the probe's payload as
// far as the ICMP quoted it, oob its control messages. ok says it answers
// the probe whose payload is marker: a quote of another probe is stale. A
// router that quotes no payload (only the 8 bytes of UDP header RFC 792
// asks for) cannot be told apart and is taken as the outstanding probe's.
func parseErr(data, oob, marker []byte) (a answer, ok bool, err error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return answer{}, false, nil // a truncated control message names nobody
	}
	for _, m := range msgs {
		v4 := m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_RECVERR
		v6 := m.Header.Level == unix.IPPROTO_IPV6 && m.Header.Type == unix.IPV6_RECVERR
		if (!v4 && !v6) || len(m.Data) < sizeofExtendedErr {
			continue
		}
		errno := syscall.Errno(binary.NativeEndian.Uint32(m.Data[0:4]))
		origin, typ, code := m.Data[4], m.Data[5], m.Data[6]
		if quoted := min(len(data), len(marker)); !bytes.Equal(data[:quoted], marker[:quoted]) {
			return answer{}, false, nil
		}
		switch origin {
		case unix.SO_EE_ORIGIN_ICMP:
			a = classify4(typ, code)
		case unix.SO_EE_ORIGIN_ICMP6:
			a = classify6(typ, code)
		case unix.SO_EE_ORIGIN_LOCAL:
			return answer{}, false, fmt.Errorf("pathtrace: the kernel refused the probe: %w", errno)
		default:
			continue
		}
		a.from = offender(m.Data[sizeofExtendedErr:])
		return a, a.from.IsValid(), nil
	}
	return answer{}, false, nil
}

// offender reads the sockaddr_in or sockaddr_in6 of the ICMP's sender.
func offender(b []byte) netip.Addr {
	if len(b) < 2 {
		return netip.Addr{}
	}
	switch binary.NativeEndian.Uint16(b) {
	case unix.AF_INET:
		if len(b) >= 8 {
			return netip.AddrFrom4([4]byte(b[4:8]))
		}
	case unix.AF_INET6:
		if len(b) >= 24 {
			return netip.AddrFrom16([16]byte(b[8:24])).Unmap()
		}
	}
	return netip.Addr{}
}

// classify4 names an ICMP (IPv4) error by type and code (RFC 792, 1812).
func classify4(typ, code uint8) answer {
	switch typ {
	case 11:
		return answer{kind: timeExceeded, text: "time exceeded"}
	case 3:
		if code == 3 {
			return answer{kind: portUnreachable, text: "port unreachable"}
		}
		names := map[uint8]string{0: "network unreachable", 1: "host unreachable", 2: "protocol unreachable",
			4: "fragmentation needed", 9: "network administratively prohibited", 10: "host administratively prohibited",
			13: "communication administratively prohibited"}
		return unreachableAnswer(names, 3, code)
	}
	return answer{kind: unreachable, text: fmt.Sprintf("ICMP type %d code %d", typ, code)}
}

// classify6 names an ICMPv6 error by type and code (RFC 4443).
func classify6(typ, code uint8) answer {
	switch typ {
	case 3:
		return answer{kind: timeExceeded, text: "time exceeded"}
	case 1:
		if code == 4 {
			return answer{kind: portUnreachable, text: "port unreachable"}
		}
		names := map[uint8]string{0: "no route to destination", 1: "communication administratively prohibited",
			3: "address unreachable", 5: "source address failed ingress/egress policy", 6: "reject route to destination"}
		return unreachableAnswer(names, 1, code)
	case 2:
		return answer{kind: unreachable, text: "packet too big"}
	}
	return answer{kind: unreachable, text: fmt.Sprintf("ICMPv6 type %d code %d", typ, code)}
}

func unreachableAnswer(names map[uint8]string, typ, code uint8) answer {
	if n, ok := names[code]; ok {
		return answer{kind: unreachable, text: fmt.Sprintf("destination unreachable: %s (type %d code %d)", n, typ, code)}
	}
	return answer{kind: unreachable, text: fmt.Sprintf("destination unreachable (type %d code %d)", typ, code)}
}
