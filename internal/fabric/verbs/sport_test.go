package verbs

import (
	"io/fs"
	"testing"
	"testing/fstest"
)

// The ports of the lab's captures: rxe on Debian 12's 6.1 put both
// directions of an RC connection between QPs 0x11 and 0x11 on 49441, and
// between 0x12 and 0x12 on 49476 (tcpdump on the leaf's port).
func TestUDPSport(t *testing.T) {
	for _, tc := range []struct {
		fl, l, r uint32
		want     uint16
	}{
		{0, 0x11, 0x11, 49441},
		{0, 0x12, 0x12, 49476},
		{0, 0x11, 0x2f, udpSport(0, 0x2f, 0x11)}, // one port for both directions
		// A product past 20 bits folds its high part in before the cut.
		{0, 0x123456, 0x654321, 63367},
		{0x1234, 7, 9, 0xc000 | 0x1234},
		{0xfffff, 7, 9, 65472},
	} {
		if got := udpSport(tc.fl, tc.l, tc.r); got != tc.want {
			t.Errorf("udpSport(%#x, %#x, %#x) = %d, want %d", tc.fl, tc.l, tc.r, got, tc.want)
		}
	}
}

func TestSportRule(t *testing.T) {
	sys := sysfs{root: fstest.MapFS{
		"rxe0/parent":            {Data: []byte("eth1\n")},
		"rxe0/node_type":         {Data: []byte("1: CA\n")},
		"siw0/parent":            {Data: []byte("eth2\n")},
		"siw0/node_type":         {Data: []byte("4: RNIC\n")},
		"mlx5_0/node_type":       {Data: []byte("1: CA\n")},
		"mlx5_0/device/driver":   {Data: []byte("../../../../bus/pci/drivers/mlx5_core"), Mode: 0o777 | fs.ModeSymlink},
		"bnxt_re0/node_type":     {Data: []byte("1: CA\n")},
		"bnxt_re0/device/driver": {Data: []byte("../../../../bus/pci/drivers/bnxt_en"), Mode: 0o777 | fs.ModeSymlink},
	}}
	for _, tc := range []struct {
		dev, kernel string
		want        sportRule
	}{
		{"rxe0", "6.1.0-56-amd64", sportFlowLabel},
		{"rxe0", "5.18.0", sportFlowLabel},
		{"rxe0", "5.15.0-91-generic", sportUnknown}, // hashed its QP number alone
		{"siw0", "6.1.0", sportUnknown},
		{"mlx5_0", "5.14.0-362.el9.x86_64", sportFlowLabel},
		{"mlx5_0", "4.18.0-553.el8.x86_64", sportUnknown},
		{"bnxt_re0", "6.8.0", sportUnknown},
		{"rxe0", "garbage", sportUnknown},
	} {
		if got := sys.sportRuleOf(tc.dev, tc.kernel); got != tc.want {
			t.Errorf("%s on %s: rule %d, want %d", tc.dev, tc.kernel, got, tc.want)
		}
	}
}
