package lldp

import (
	"encoding/binary"
	"fmt"
	"net"
	"slices"
)

// EtherType is LLDP's Ethernet type.
const EtherType = 0x88cc

// Multicast lists the destinations LLDP is sent to: the nearest bridge
// (01:80:c2:00:00:0e, what switches use towards hosts), the nearest
// non-TPMR bridge and the nearest customer bridge.
var Multicast = []net.HardwareAddr{
	{0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e},
	{0x01, 0x80, 0xc2, 0x00, 0x00, 0x03},
	{0x01, 0x80, 0xc2, 0x00, 0x00, 0x00},
}

// ParseFrame reads an Ethernet frame carrying an LLDPDU, skipping 802.1Q
// and 802.1ad tags (a NIC without VLAN offload leaves them in), and
// returns the unit and the sender's MAC.
func ParseFrame(f []byte) (*LLDPDU, net.HardwareAddr, error) {
	if len(f) < 14 {
		return nil, nil, fmt.Errorf("frame of %d bytes, shorter than an Ethernet header (14)", len(f))
	}
	// A copy: a reader hands us its buffer, and the next frame overwrites it
	// while a Neighbor still names this sender.
	src := net.HardwareAddr(slices.Clone(f[6:12]))
	off := 12
	for {
		et := binary.BigEndian.Uint16(f[off:])
		switch et {
		case 0x8100, 0x88a8:
			off += 4
			if len(f) < off+2 {
				return nil, src, fmt.Errorf("frame of %d bytes ends inside its VLAN tags", len(f))
			}
			continue
		case EtherType:
		default:
			return nil, src, fmt.Errorf("EtherType 0x%04x, not LLDP (0x88cc)", et)
		}
		break
	}
	du, err := Parse(f[off+2:])
	return du, src, err
}
