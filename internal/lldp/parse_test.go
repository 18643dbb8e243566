package lldp

import (
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseCapturedFrame(t *testing.T) {
	du, src, err := ParseFrame(capturedFrame(t))
	if err != nil {
		t.Fatal(err)
	}
	if src.String() != "9a:68:32:de:dd:23" {
		t.Errorf("source MAC %s", src)
	}
	want := LLDPDU{ChassisID: ID{7, TypeLocal, "leaf-1-chassis"}, PortID: ID{5, TypeInterfaceName, "va"}, TTL: 4,
		PortDescription: "to gpu01", SystemName: "leaf-1", SystemDescription: "test leaf",
		Capabilities: &Capabilities{System: 0x009c, Enabled: 0x0080}}
	if du.ChassisID != want.ChassisID || du.PortID != want.PortID || du.TTL != want.TTL ||
		du.PortDescription != want.PortDescription || du.SystemName != want.SystemName ||
		du.SystemDescription != want.SystemDescription || *du.Capabilities != *want.Capabilities {
		t.Errorf("got %+v\nwant %+v", du, want)
	}
	if len(du.ManagementAddrs) != 1 || du.ManagementAddrs[0].Addr != "192.0.2.1" || du.ManagementAddrs[0].IfSubtype != 2 ||
		du.ManagementAddrs[0].IfNumber != 6 {
		t.Errorf("management addresses %+v, want 192.0.2.1 on ifIndex 6", du.ManagementAddrs)
	}
	if len(du.OrgSpecific) != 2 || du.OrgSpecific[0].OUI != [3]byte{0x00, 0x12, 0x0f} || du.OrgSpecific[0].Subtype != 3 {
		t.Errorf("organisational TLVs %+v, want two IEEE 802.3 ones (link aggregation first)", du.OrgSpecific)
	}
	n := du.Neighbor("vb", src, time.Unix(100, 0))
	if n.Label() != "leaf-1 port va" || n.TTL != 4*time.Second || n.Source != SourceFrame {
		t.Errorf("neighbour %+v (label %q)", n, n.Label())
	}
}

func TestParseSubtypes(t *testing.T) {
	cases := []struct {
		name        string
		chassis     []byte
		port        []byte
		wantChassis ID
		wantPort    ID
	}{
		{"mac and interface name", []byte{4, 0x52, 0x54, 0, 1, 2, 3}, append([]byte{5}, "Ethernet1/3"...),
			ID{4, TypeMAC, "52:54:00:01:02:03"}, ID{5, TypeInterfaceName, "Ethernet1/3"}},
		{"IPv4 chassis, MAC port", []byte{5, 1, 10, 1, 2, 3}, []byte{3, 0xaa, 0xbb, 0xcc, 0, 0, 1},
			ID{5, TypeNetworkAddress, "10.1.2.3"}, ID{3, TypeMAC, "aa:bb:cc:00:00:01"}},
		{"IPv6 chassis, local port", append([]byte{5, 2}, net.ParseIP("2001:db8::1").To16()...), append([]byte{7}, "17"...),
			ID{5, TypeNetworkAddress, "2001:db8::1"}, ID{7, TypeLocal, "17"}},
		{"interface name chassis, alias port", append([]byte{6}, "eth0"...), append([]byte{1}, "uplink"...),
			ID{6, TypeInterfaceName, "eth0"}, ID{1, TypeInterfaceAlias, "uplink"}},
		{"chassis component, agent circuit", append([]byte{1}, "chassis-7"...), append([]byte{6}, "circuit"...),
			ID{1, TypeChassisComponent, "chassis-7"}, ID{6, TypeAgentCircuitID, "circuit"}},
		{"port component chassis, port component port", append([]byte{3}, "pc"...), append([]byte{2}, "pc2"...),
			ID{3, TypePortComponent, "pc"}, ID{2, TypePortComponent, "pc2"}},
		{"binary local ID as hex", []byte{7, 0x00, 0x1b, 0xff}, append([]byte{5}, "swp1\x00"...),
			ID{7, TypeLocal, "00:1b:ff"}, ID{5, TypeInterfaceName, "swp1"}},
		{"reserved subtypes", []byte{9, 1, 2}, []byte{0, 0xfe},
			ID{9, "reserved-9", "01:02"}, ID{0, "reserved-0", "fe"}},
		{"odd-length MAC, unknown address family", []byte{4, 1, 2, 3}, []byte{4, 99, 1, 2},
			ID{4, TypeMAC, "01:02:03"}, ID{4, TypeNetworkAddress, "family 99 01:02"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			du, err := Parse(concat(tlvBytes(tlvChassisID, c.chassis...), tlvBytes(tlvPortID, c.port...), ttlTLV(30)))
			if err != nil {
				t.Fatal(err)
			}
			if du.ChassisID != c.wantChassis || du.PortID != c.wantPort {
				t.Errorf("chassis %+v port %+v, want %+v %+v", du.ChassisID, du.PortID, c.wantChassis, c.wantPort)
			}
		})
	}
}

func TestParseKeepsTextPrintable(t *testing.T) {
	du, err := Parse(concat(tlvBytes(tlvChassisID, 7, 'x'), tlvBytes(tlvPortID, 7, 'y'), ttlTLV(1),
		strTLV(tlvSystemName, 0, "leaf\x1b[31m-1\x00"), strTLV(tlvSystemDescription, 0, "line one\r\nline two\xff")))
	if err != nil {
		t.Fatal(err)
	}
	if du.SystemName != `leaf\u001b[31m-1` {
		t.Errorf("system name %q: an escape sequence must not reach a terminal", du.SystemName)
	}
	if du.SystemDescription != `line one  line two\xff` {
		t.Errorf("system description %q", du.SystemDescription)
	}
}

func TestParseSkipsUnknownAndKeepsFirstOptional(t *testing.T) {
	du, err := Parse(concat(tlvBytes(tlvChassisID, 7, 'c'), tlvBytes(tlvPortID, 7, 'p'), ttlTLV(9),
		tlvBytes(42, 1, 2, 3), strTLV(tlvSystemName, 0, "first"), strTLV(tlvSystemName, 0, "second"), tlvBytes(126)))
	if err != nil {
		t.Fatal(err)
	}
	if du.SystemName != "first" || !slices.Equal(du.Unknown, []uint8{42, 126}) {
		t.Errorf("system name %q, unknown %v; want first and [42 126]", du.SystemName, du.Unknown)
	}
}

func TestParseWithoutEndAndWithPadding(t *testing.T) {
	base := concat(tlvBytes(tlvChassisID, 7, 'c'), tlvBytes(tlvPortID, 7, 'p'), ttlTLV(0))
	for name, b := range map[string][]byte{"no end TLV": base, "padding after end": append(concat(base, tlvBytes(tlvEnd)), 0xde, 0xad)} {
		du, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if du.TTL != 0 || du.ChassisID.Value != "c" {
			t.Errorf("%s: %+v", name, du)
		}
	}
}

func TestParseRejects(t *testing.T) {
	ch, po, ttl := tlvBytes(tlvChassisID, 7, 'c'), tlvBytes(tlvPortID, 7, 'p'), ttlTLV(5)
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "no chassis ID TLV"},
		{"one byte", []byte{0x02}, "truncated TLV header"},
		{"truncated value", concat(ch, po, ttl)[:len(concat(ch, po, ttl))-1], "truncated TTL TLV: length 2, 1 bytes left"},
		{"port before chassis", concat(po, ch, ttl), "port ID TLV where the chassis ID TLV must be"},
		{"no TTL", concat(ch, po, tlvBytes(tlvEnd)), "end TLV where the TTL TLV must be"},
		{"optional before TTL", concat(ch, po, strTLV(tlvSystemName, 0, "x"), ttl), "system name TLV where the TTL TLV must be"},
		{"second chassis", concat(ch, po, ttl, ch), "a second chassis ID TLV"},
		{"empty chassis ID", concat(tlvBytes(tlvChassisID, 4), po, ttl), "length 1, must be 2-256"},
		{"long TTL", concat(ch, po, tlvBytes(tlvTTL, 0, 0, 5)), "length 3, must be 2"},
		{"end with a value", concat(ch, po, ttl, tlvBytes(tlvEnd, 1)), "end TLV of length 1"},
		{"short capabilities", concat(ch, po, ttl, tlvBytes(tlvSystemCapabilities, 0, 4)), "length 2, must be 4"},
		{"short org TLV", concat(ch, po, ttl, tlvBytes(tlvOrgSpecific, 0, 0x12, 0x0f)), "must be at least 4"},
		{"management address too long for TLV", concat(ch, po, ttl, tlvBytes(tlvManagementAddress, 20, 1, 1, 2, 3, 4, 2, 0, 0)),
			"leaves no room"},
		{"management OID length wrong", concat(ch, po, ttl, tlvBytes(tlvManagementAddress, 5, 1, 10, 0, 0, 1, 2, 0, 0, 0, 7, 3, 1)),
			"OID length 3, but 1 bytes follow"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.b)
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a ParseError with %q", err, c.want)
			}
		})
	}
}

func TestParseFrame(t *testing.T) {
	src := []byte{0x52, 0x54, 0, 0xaa, 0xbb, 0xcc}
	du, from, err := ParseFrame(ethernet(src, leafDU()))
	if err != nil {
		t.Fatal(err)
	}
	n := du.Neighbor("eth1", from, time.Unix(0, 0))
	if n.Label() != "leaf-1 port swp3" || n.ChassisID != "52:54:00:12:34:56" || n.ChassisIDType != TypeMAC ||
		n.PortDescription != "gpu01 eth1" || n.TTL != 120*time.Second || from.String() != "52:54:00:aa:bb:cc" ||
		!slices.Equal(n.ManagementAddrs, []string{"10.0.0.1"}) {
		t.Errorf("%+v", n)
	}
	tagged := ethernet(src, nil)[:12]
	tagged = append(tagged, 0x81, 0x00, 0x00, 0x64, 0x88, 0xcc)
	if du, _, err := ParseFrame(append(tagged, leafDU()...)); err != nil || du.SystemName != "leaf-1" {
		t.Errorf("802.1Q-tagged frame: %v", err)
	}
	for name, f := range map[string][]byte{
		"short":           {1, 2, 3},
		"IPv4":            append(ethernet(src, nil)[:12], 0x08, 0x00, 0x45),
		"tags to the end": append(ethernet(src, nil)[:12], 0x81, 0x00, 0x00, 0x64),
	} {
		if _, _, err := ParseFrame(f); err == nil {
			t.Errorf("%s frame: no error", name)
		}
	}
}

func TestLabel(t *testing.T) {
	cases := map[string]Neighbor{
		"leaf-1 port swp3":                    {SystemName: "leaf-1", PortID: "swp3", PortIDType: TypeInterfaceName},
		"chassis 52:54:00:12:34:56 port 17":   {ChassisID: "52:54:00:12:34:56", PortID: "17", PortIDType: TypeLocal},
		"leaf-2 port mac 52:54:00:12:34:57":   {SystemName: "leaf-2", PortID: "52:54:00:12:34:57", PortIDType: TypeMAC},
		"spine port network-address 10.0.0.1": {SystemName: "spine", PortID: "10.0.0.1", PortIDType: TypeNetworkAddress},
		"leaf-3 port uplink":                  {SystemName: "leaf-3", PortID: "uplink", PortIDType: TypeInterfaceAlias},
	}
	for want, n := range cases {
		if got := n.Label(); got != want {
			t.Errorf("Label() = %q, want %q", got, want)
		}
	}
}

// The sender's MAC is the frame's own copy: a reader reuses its buffer for
// the next frame while a Neighbor still names this sender.
func TestParseFrameKeepsTheSender(t *testing.T) {
	f := capturedFrame(t)
	_, src, err := ParseFrame(f)
	if err != nil {
		t.Fatal(err)
	}
	want := src.String()
	for i := range f {
		f[i] = 0xff
	}
	if src.String() != want {
		t.Fatalf("the sender %s became %s when the buffer was reused", want, src)
	}
}
