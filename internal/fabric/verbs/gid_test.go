package verbs

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func entry(i int, addr, typ, netdev string) gidEntry {
	return gidEntry{Index: i, Raw: netip.MustParseAddr(addr).As16(), Type: typ, Netdev: netdev}
}

func TestChooseGIDAuto(t *testing.T) {
	rxe := []gidEntry{
		entry(0, "fe80::5054:ff:fe77:b", "RoCE v2", "eth0"),
		entry(1, "::ffff:10.77.0.11", "RoCE v2", "eth0"),
	}
	mlx := []gidEntry{
		entry(0, "fe80::ee0d:9aff:fe2f:c21a", "IB/RoCE v1", "p1p1"),
		entry(1, "fe80::ee0d:9aff:fe2f:c21a", "RoCE v2", "p1p1"),
		entry(2, "::ffff:192.168.99.100", "IB/RoCE v1", "p1p1"),
		entry(3, "::ffff:192.168.99.100", "RoCE v2", "p1p1"),
		entry(4, "2001:db8::1", "RoCE v2", "p1p1"),
	}
	v6only := []gidEntry{
		entry(0, "fe80::1", "RoCE v2", "eth0"),
		entry(1, "2001:db8::1", "RoCE v2", "eth0"),
	}
	cases := []struct {
		name    string
		ll      string
		entries []gidEntry
		index   int
		reason  string
	}{
		{"soft-roce picks the ipv4 entry", "Ethernet", rxe, 1, "IPv4-mapped RoCE v2"},
		{"connectx picks v2 ipv4 over v1 ipv4", "Ethernet", mlx, 3, "192.168.99.100 on p1p1"},
		{"global ipv6 beats link-local", "Ethernet", v6only, 1, "global IPv6"},
		{"infiniband uses index 0", "InfiniBand", []gidEntry{entry(0, "fe80::2", "IB/RoCE v1", "")}, 0, "InfiniBand"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, why, err := chooseGID("dev", 1, c.ll, c.entries, gidPolicy{auto: true})
			if err != nil {
				t.Fatal(err)
			}
			if g.Index != c.index || !strings.Contains(why, c.reason) {
				t.Fatalf("got index %d (%s), want %d with %q", g.Index, why, c.index, c.reason)
			}
		})
	}
}

func TestChooseGIDFailures(t *testing.T) {
	hidden := []gidEntry{entry(0, "fe80::1", "RoCE v2", ""), entry(1, "::ffff:10.0.0.1", "RoCE v2", "")}
	cases := []struct {
		name  string
		pol   gidPolicy
		in    []gidEntry
		class probe.Class
	}{
		{"container without the netdev", gidPolicy{auto: true}, hidden, probe.ClassNoNetdev},
		{"explicit index without netdev", gidPolicy{index: 1}, hidden, probe.ClassNoNetdev},
		{"explicit index empty", gidPolicy{index: 5}, hidden, probe.ClassInvalidGID},
		{"empty table", gidPolicy{auto: true}, nil, probe.ClassInvalidGID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := chooseGID("dev", 1, "Ethernet", c.in, c.pol)
			if err == nil || err.Class != c.class || err.Fix == "" {
				t.Fatalf("got %v, want class %s with a fix", err, c.class)
			}
		})
	}
}

func TestGIDString(t *testing.T) {
	g := entry(1, "::ffff:10.77.0.11", "RoCE v2", "eth0")
	if g.String() != "::ffff:10.77.0.11" || g.ipv4() != "10.77.0.11" {
		t.Fatalf("%s %s", g, g.ipv4())
	}
	raw, err := parseGIDString(g.String())
	if err != nil || raw != g.Raw {
		t.Fatalf("round trip: %v %v", raw, err)
	}
	if _, err := parseGIDString("not-a-gid"); err == nil {
		t.Fatal("bad GID accepted")
	}
}

func TestNeedsGRH(t *testing.T) {
	here := [16]byte{0xfe, 0x80, 7: 1, 15: 1}
	same := [16]byte{0xfe, 0x80, 7: 1, 15: 2}
	other := [16]byte{0xfe, 0x80, 7: 2, 15: 2}
	cases := []struct {
		name   string
		roce   bool
		peer   [16]byte
		hasGID bool
		lid    uint16
		want   bool
	}{
		{"RoCE always", true, same, true, 0, true},
		{"RoCE with a LID too", true, same, true, 5, true},
		{"IB in the subnet", false, same, true, 5, false},
		{"IB in another subnet", false, other, true, 5, true},
		{"IB without a LID", false, same, true, 0, true},
		{"IB, LID only", false, [16]byte{}, false, 5, false},
	}
	for _, c := range cases {
		if got := needsGRH(c.roce, c.peer, c.hasGID, c.lid, here); got != c.want {
			t.Errorf("%s: needsGRH = %v, want %v", c.name, got, c.want)
		}
	}
}
