package pathtrace

import (
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// errMsg builds the control message the kernel puts on an error-queue
// read: sock_extended_err, then the offender's sockaddr.
func errMsg(origin, typ, code uint8, from netip.Addr) []byte {
	data := make([]byte, sizeofExtendedErr)
	binary.NativeEndian.PutUint32(data, uint32(unix.EHOSTUNREACH))
	data[4], data[5], data[6] = origin, typ, code
	level, kind := int32(unix.IPPROTO_IP), int32(unix.IP_RECVERR)
	if from.Is4() {
		sa := make([]byte, 16)
		binary.NativeEndian.PutUint16(sa, unix.AF_INET)
		copy(sa[4:], from.AsSlice())
		data = append(data, sa...)
	} else {
		level, kind = unix.IPPROTO_IPV6, unix.IPV6_RECVERR
		sa := make([]byte, 28)
		binary.NativeEndian.PutUint16(sa, unix.AF_INET6)
		copy(sa[8:], from.AsSlice())
		data = append(data, sa...)
	}
	b := make([]byte, unix.CmsgSpace(len(data)))
	binary.NativeEndian.PutUint64(b, uint64(unix.CmsgLen(len(data))))
	binary.NativeEndian.PutUint32(b[8:], uint32(level))
	binary.NativeEndian.PutUint32(b[12:], uint32(kind))
	copy(b[unix.CmsgLen(0):], data)
	return b
}

func TestParseErr(t *testing.T) {
	marker := []byte{1, 2, 3, 4, 0, 0, 0, 7}
	stale := []byte{1, 2, 3, 4, 0, 0, 0, 6}
	spine6 := netip.MustParseAddr("fd00:11::2")
	for _, c := range []struct {
		name    string
		data    []byte
		oob     []byte
		ok      bool
		kind    kind
		from    netip.Addr
		text    string
		errText string
	}{
		{name: "time exceeded", data: marker, oob: errMsg(unix.SO_EE_ORIGIN_ICMP, 11, 0, spine), ok: true, kind: timeExceeded, from: spine, text: "time exceeded"},
		{name: "an earlier probe's late answer", data: stale, oob: errMsg(unix.SO_EE_ORIGIN_ICMP, 11, 0, spine)},
		{name: "quoted no payload", data: nil, oob: errMsg(unix.SO_EE_ORIGIN_ICMP, 11, 0, spine), ok: true, kind: timeExceeded, from: spine, text: "time exceeded"},
		{name: "quoted part of it", data: marker[:3], oob: errMsg(unix.SO_EE_ORIGIN_ICMP, 3, 3, host2), ok: true, kind: portUnreachable, from: host2, text: "port unreachable"},
		{name: "filtered", data: marker, oob: errMsg(unix.SO_EE_ORIGIN_ICMP, 3, 13, spine), ok: true, kind: unreachable, from: spine,
			text: "destination unreachable: communication administratively prohibited (type 3 code 13)"},
		{name: "v6 hop limit", data: marker, oob: errMsg(unix.SO_EE_ORIGIN_ICMP6, 3, 0, spine6), ok: true, kind: timeExceeded, from: spine6, text: "time exceeded"},
		{name: "v6 port unreachable", data: marker, oob: errMsg(unix.SO_EE_ORIGIN_ICMP6, 1, 4, spine6), ok: true, kind: portUnreachable, from: spine6, text: "port unreachable"},
		{name: "local", data: marker, oob: errMsg(unix.SO_EE_ORIGIN_LOCAL, 0, 0, host1), errText: "the kernel refused the probe"},
		{name: "no control message", data: marker},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, ok, err := parseErr(c.data, c.oob, marker)
			if c.errText != "" {
				if err == nil || !strings.Contains(err.Error(), c.errText) {
					t.Fatalf("err %v, want %q", err, c.errText)
				}
				return
			}
			if err != nil || ok != c.ok {
				t.Fatalf("ok %v err %v, want ok %v", ok, err, c.ok)
			}
			if ok && (a.kind != c.kind || a.from != c.from || a.text != c.text) {
				t.Errorf("answer %+v, want kind %d from %s %q", a, c.kind, c.from, c.text)
			}
		})
	}
}
