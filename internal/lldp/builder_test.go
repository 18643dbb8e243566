package lldp

import (
	"encoding/binary"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// tlvBytes encodes one TLV: 7 bits of type, 9 of length, then the value.
func tlvBytes(typ uint8, v ...byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(typ)<<9|uint16(len(v)))
	return append(b, v...)
}

func concat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func ttlTLV(s uint16) []byte { return tlvBytes(tlvTTL, byte(s>>8), byte(s)) }

func strTLV(typ, sub uint8, s string) []byte {
	if sub == 0 {
		return tlvBytes(typ, []byte(s)...)
	}
	return tlvBytes(typ, append([]byte{sub}, s...)...)
}

// leafDU is a switch's typical announcement: MAC chassis, interface-name
// port, TTL 120, names, a management address, end.
func leafDU() []byte {
	return concat(
		tlvBytes(tlvChassisID, 4, 0x52, 0x54, 0x00, 0x12, 0x34, 0x56),
		strTLV(tlvPortID, 5, "swp3"),
		ttlTLV(120),
		strTLV(tlvPortDescription, 0, "gpu01 eth1"),
		strTLV(tlvSystemName, 0, "leaf-1"),
		strTLV(tlvSystemDescription, 0, "Cumulus Linux 5.4"),
		tlvBytes(tlvSystemCapabilities, 0x00, 0x14, 0x00, 0x14),
		tlvBytes(tlvManagementAddress, 5, 1, 10, 0, 0, 1, 2, 0, 0, 0, 7, 0),
		tlvBytes(tlvEnd),
	)
}

// ethernet wraps an LLDPDU in a frame to the nearest-bridge group.
func ethernet(src []byte, du []byte) []byte {
	f := append([]byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e}, src...)
	f = binary.BigEndian.AppendUint16(f, EtherType)
	return append(f, du...)
}

// capturedFrame is testdata/lldpd-1.0.16-frame.hex: a frame the real
// lldpd sent.
func capturedFrame(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile("testdata/lldpd-1.0.16-frame.hex")
	if err != nil {
		tb.Fatal(err)
	}
	var h strings.Builder
	for line := range strings.Lines(string(b)) {
		if !strings.HasPrefix(line, "#") {
			h.WriteString(strings.TrimSpace(line))
		}
	}
	f, err := hex.DecodeString(h.String())
	if err != nil {
		tb.Fatal(err)
	}
	return f
}
