package lldp

import (
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

// The subtypes' names: chassis IDs (802.1AB table 8-2) and port IDs
// (table 8-3) share their forms but not their numbers.
var (
	chassisTypes = [...]string{1: TypeChassisComponent, 2: TypeInterfaceAlias, 3: TypePortComponent, 4: TypeMAC,
		5: TypeNetworkAddress, 6: TypeInterfaceName, 7: TypeLocal}
	portTypes = [...]string{1: TypeInterfaceAlias, 2: TypePortComponent, 3: TypeMAC, 4: TypeNetworkAddress,
		5: TypeInterfaceName, 6: TypeAgentCircuitID, 7: TypeLocal}
)

func chassisID(sub uint8, v []byte) ID { return typedID(sub, chassisTypes[:], v) }
func portID(sub uint8, v []byte) ID    { return typedID(sub, portTypes[:], v) }

// typedID renders an ID by its subtype's form: a MAC or a network address
// decoded, a reserved subtype as hex, the rest as text.
func typedID(sub uint8, names []string, v []byte) ID {
	if int(sub) >= len(names) || names[sub] == "" {
		return ID{sub, fmt.Sprintf("reserved-%d", sub), net.HardwareAddr(v).String()}
	}
	switch names[sub] {
	case TypeMAC:
		return ID{sub, TypeMAC, net.HardwareAddr(v).String()}
	case TypeNetworkAddress:
		return ID{sub, TypeNetworkAddress, networkAddress(v)}
	}
	return ID{sub, names[sub], idText(v)}
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
	return fmt.Sprintf("family %d %s", family, net.HardwareAddr(a).String())
}

// idText is a name-like ID as text when it is printable, else hex: local
// IDs are sometimes binary, and a guessed rendering would not match what
// the switch's own CLI shows.
func idText(v []byte) string {
	s := strings.TrimRight(string(v), "\x00")
	if s != "" && utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return s
	}
	return net.HardwareAddr(v).String()
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
