package lldp

import (
	"encoding/binary"
	"fmt"
)

// TLV types (IEEE 802.1AB-2016, table 8-1).
const (
	tlvEnd                = 0
	tlvChassisID          = 1
	tlvPortID             = 2
	tlvTTL                = 3
	tlvPortDescription    = 4
	tlvSystemName         = 5
	tlvSystemDescription  = 6
	tlvSystemCapabilities = 7
	tlvManagementAddress  = 8
	tlvOrgSpecific        = 127
)

// LLDPDU is one parsed LLDP data unit.
type LLDPDU struct {
	ChassisID ID
	PortID    ID
	// TTL is how many seconds the receiver may keep this information; 0
	// is a shutdown LLDPDU: forget the sender now.
	TTL               uint16
	PortDescription   string
	SystemName        string
	SystemDescription string
	Capabilities      *Capabilities
	ManagementAddrs   []ManagementAddr
	OrgSpecific       []OrgTLV
	// Unknown lists the types of TLVs this parser does not read (the
	// reserved 9-126), in frame order; they are skipped, not errors.
	Unknown []uint8
}

// ID is a chassis or port ID: its subtype's number and name, and its value
// rendered as text (a MAC as aa:bb:cc:dd:ee:ff, a network address as an
// IP, names as they are, anything unprintable as hex).
type ID struct {
	Subtype uint8
	Type    string
	Value   string
}

// Capabilities are the system capabilities TLV's two bit maps (bridge,
// router, station, ...): what the system can do and what is enabled.
type Capabilities struct {
	System, Enabled uint16
}

// ManagementAddr is one management address TLV.
type ManagementAddr struct {
	Family    uint8  // IANA address family: 1 IPv4, 2 IPv6, 6 IEEE 802 (MAC)
	Addr      string // rendered like an ID's value
	IfSubtype uint8  // 1 unknown, 2 ifIndex, 3 system port number
	IfNumber  uint32
	OID       []byte
}

// OrgTLV is an organisationally specific TLV (802.1, 802.3, vendors).
type OrgTLV struct {
	OUI     [3]byte
	Subtype uint8
	Info    []byte
}

// ParseError is an LLDPDU that cannot be read: where and why.
type ParseError struct {
	Offset int // byte offset into the LLDPDU of the TLV at fault
	Msg    string
}

func (e *ParseError) Error() string { return fmt.Sprintf("LLDPDU byte %d: %s", e.Offset, e.Msg) }

// mandatory are the TLVs every LLDPDU starts with, in this order.
var mandatory = [...]uint8{tlvChassisID, tlvPortID, tlvTTL}

var tlvNames = map[uint8]string{tlvEnd: "end", tlvChassisID: "chassis ID", tlvPortID: "port ID", tlvTTL: "TTL",
	tlvPortDescription: "port description", tlvSystemName: "system name", tlvSystemDescription: "system description",
	tlvSystemCapabilities: "system capabilities", tlvManagementAddress: "management address", tlvOrgSpecific: "organisationally specific"}

func tlvName(t uint8) string {
	if n, ok := tlvNames[t]; ok {
		return n + " TLV"
	}
	return fmt.Sprintf("TLV type %d", t)
}

// Parse reads an LLDPDU (the Ethernet payload). The chassis ID, port ID
// and TTL TLVs must come first and in that order, as 802.1AB requires of
// a receiver; unknown TLVs are skipped; an End TLV stops the parse and
// whatever follows it (Ethernet padding) is ignored. A unit without an End
// TLV ends at its last TLV (802.1AB-2009 made it optional).
func Parse(b []byte) (*LLDPDU, error) {
	du := &LLDPDU{}
	seen := 0 // mandatory TLVs read so far
	var optional map[uint8]bool
	for off := 0; off < len(b); {
		if len(b)-off < 2 {
			return nil, &ParseError{off, fmt.Sprintf("truncated TLV header: %d byte left", len(b)-off)}
		}
		h := binary.BigEndian.Uint16(b[off:])
		typ, n := uint8(h>>9), int(h&0x1ff)
		if len(b)-off-2 < n {
			return nil, &ParseError{off, fmt.Sprintf("truncated %s: length %d, %d bytes left", tlvName(typ), n, len(b)-off-2)}
		}
		v := b[off+2 : off+2+n]
		if seen < len(mandatory) && typ != mandatory[seen] {
			return nil, &ParseError{off, fmt.Sprintf("%s where the %s must be", tlvName(typ), tlvName(mandatory[seen]))}
		}
		if seen == len(mandatory) && (typ == tlvChassisID || typ == tlvPortID || typ == tlvTTL) {
			return nil, &ParseError{off, "a second " + tlvName(typ)}
		}
		if typ == tlvEnd {
			if n != 0 {
				return nil, &ParseError{off, fmt.Sprintf("end TLV of length %d, must be 0", n)}
			}
			break
		}
		if err := du.tlv(typ, v, &seen, &optional); err != "" {
			return nil, &ParseError{off, tlvName(typ) + ": " + err}
		}
		off += 2 + n
	}
	if seen < len(mandatory) {
		return nil, &ParseError{len(b), "no " + tlvName(mandatory[seen]) + ": an LLDPDU needs chassis ID, port ID and TTL"}
	}
	return du, nil
}

// tlv reads one TLV's value into du; a non-empty result says what is
// wrong with it. A repeated optional TLV keeps its first value: 802.1AB
// allows one of each, and a later one has no better claim.
func (du *LLDPDU) tlv(typ uint8, v []byte, seen *int, optional *map[uint8]bool) string {
	switch typ {
	case tlvChassisID, tlvPortID:
		if len(v) < 2 || len(v) > 256 {
			return fmt.Sprintf("length %d, must be 2-256 (a subtype and 1-255 bytes)", len(v))
		}
		if typ == tlvChassisID {
			du.ChassisID = chassisID(v[0], v[1:])
		} else {
			du.PortID = portID(v[0], v[1:])
		}
		*seen++
		return ""
	case tlvTTL:
		if len(v) != 2 {
			return fmt.Sprintf("length %d, must be 2", len(v))
		}
		du.TTL = binary.BigEndian.Uint16(v)
		*seen++
		return ""
	case tlvManagementAddress:
		m, err := managementAddr(v)
		if err != "" {
			return err
		}
		du.ManagementAddrs = append(du.ManagementAddrs, m)
		return ""
	case tlvOrgSpecific:
		if len(v) < 4 {
			return fmt.Sprintf("length %d, must be at least 4 (an OUI and a subtype)", len(v))
		}
		du.OrgSpecific = append(du.OrgSpecific, OrgTLV{OUI: [3]byte(v[:3]), Subtype: v[3], Info: v[4:]})
		return ""
	}
	if *optional == nil {
		*optional = map[uint8]bool{}
	}
	first := !(*optional)[typ]
	(*optional)[typ] = true
	switch typ {
	case tlvPortDescription:
		if first {
			du.PortDescription = text(v)
		}
	case tlvSystemName:
		if first {
			du.SystemName = text(v)
		}
	case tlvSystemDescription:
		if first {
			du.SystemDescription = text(v)
		}
	case tlvSystemCapabilities:
		if len(v) != 4 {
			return fmt.Sprintf("length %d, must be 4", len(v))
		}
		if first {
			du.Capabilities = &Capabilities{System: binary.BigEndian.Uint16(v), Enabled: binary.BigEndian.Uint16(v[2:])}
		}
	default:
		du.Unknown = append(du.Unknown, typ)
	}
	return ""
}

// managementAddr reads the management address TLV: address string length
// (subtype included), address subtype, address, interface numbering
// subtype, interface number, OID length, OID.
func managementAddr(v []byte) (ManagementAddr, string) {
	if len(v) < 9 {
		return ManagementAddr{}, fmt.Sprintf("length %d, must be at least 9", len(v))
	}
	alen := int(v[0])
	if alen < 2 || alen > 32 {
		return ManagementAddr{}, fmt.Sprintf("address string length %d, must be 2-32", alen)
	}
	if len(v) < 1+alen+6 {
		return ManagementAddr{}, fmt.Sprintf("address string length %d leaves no room for the interface number in %d bytes", alen, len(v))
	}
	m := ManagementAddr{Family: v[1], Addr: address(v[1], v[2:1+alen])}
	rest := v[1+alen:]
	m.IfSubtype, m.IfNumber = rest[0], binary.BigEndian.Uint32(rest[1:5])
	olen := int(rest[5])
	if len(rest)-6 != olen {
		return ManagementAddr{}, fmt.Sprintf("OID length %d, but %d bytes follow it", olen, len(rest)-6)
	}
	if olen > 0 {
		m.OID = rest[6:]
	}
	return m, ""
}
