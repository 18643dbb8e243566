package lldp

import (
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Subtype names, shared by chassis and port IDs where they mean the same
// thing. lldpd's names (ifname, ip, ...) are mapped onto these.
const (
	TypeChassisComponent = "chassis-component"
	TypeInterfaceAlias   = "interface-alias"
	TypePortComponent    = "port-component"
	TypeMAC              = "mac"
	TypeNetworkAddress   = "network-address"
	TypeInterfaceName    = "interface-name"
	TypeAgentCircuitID   = "agent-circuit-id"
	TypeLocal            = "local"
)

// chassisID renders a chassis ID (802.1AB table 8-2).
func chassisID(sub uint8, v []byte) ID {
	switch sub {
	case 1:
		return ID{sub, TypeChassisComponent, idText(v)}
	case 2:
		return ID{sub, TypeInterfaceAlias, idText(v)}
	case 3:
		return ID{sub, TypePortComponent, idText(v)}
	case 4:
		return ID{sub, TypeMAC, mac(v)}
	case 5:
		return ID{sub, TypeNetworkAddress, networkAddress(v)}
	case 6:
		return ID{sub, TypeInterfaceName, idText(v)}
	case 7:
		return ID{sub, TypeLocal, idText(v)}
	}
	return ID{sub, fmt.Sprintf("reserved-%d", sub), hexColons(v)}
}

// portID renders a port ID (802.1AB table 8-3).
func portID(sub uint8, v []byte) ID {
	switch sub {
	case 1:
		return ID{sub, TypeInterfaceAlias, idText(v)}
	case 2:
		return ID{sub, TypePortComponent, idText(v)}
	case 3:
		return ID{sub, TypeMAC, mac(v)}
	case 4:
		return ID{sub, TypeNetworkAddress, networkAddress(v)}
	case 5:
		return ID{sub, TypeInterfaceName, idText(v)}
	case 6:
		return ID{sub, TypeAgentCircuitID, idText(v)}
	case 7:
		return ID{sub, TypeLocal, idText(v)}
	}
	return ID{sub, fmt.Sprintf("reserved-%d", sub), hexColons(v)}
}

func mac(v []byte) string {
	if len(v) == 6 {
		return net.HardwareAddr(v).String()
	}
	return hexColons(v)
}

// networkAddress is an IANA address family number and the address.
func networkAddress(v []byte) string {
	if len(v) == 0 {
		return ""
	}
	return address(v[0], v[1:])
}

func address(family uint8, a []byte) string {
	switch {
	case family == 1 && len(a) == 4, family == 2 && len(a) == 16:
		ip, _ := netip.AddrFromSlice(a)
		return ip.String()
	case family == 6 && len(a) == 6:
		return net.HardwareAddr(a).String()
	}
	return fmt.Sprintf("family %d %s", family, hexColons(a))
}

// idText is a name-like ID as text when it is printable, else hex: local
// IDs are sometimes binary, and a guessed rendering would not match what
// the switch's own CLI shows.
func idText(v []byte) string {
	s := strings.TrimRight(string(v), "\x00")
	if s != "" && utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return s
	}
	return hexColons(v)
}

// text is a description or a name made safe to print: a switch's strings
// end up on operators' terminals, so control characters become spaces
// (line breaks, tabs) or escapes (everything else, such as ESC), and
// invalid UTF-8 becomes escapes.
func text(v []byte) string {
	var b strings.Builder
	s := strings.TrimRight(string(v), "\x00")
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return strings.TrimSpace(b.String())
}

func hexColons(v []byte) string {
	h := hex.EncodeToString(v)
	var b strings.Builder
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(h[i : i+2])
	}
	return b.String()
}
