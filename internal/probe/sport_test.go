package probe

import "testing"

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
		{0, 0x11, 0x2f, RoCEv2Sport(0, 0x2f, 0x11)}, // one port for both directions
		// A product past 20 bits folds its high part in before the cut.
		{0, 0x123456, 0x654321, 63367},
		{0x1234, 7, 9, 0xc000 | 0x1234},
		{0xfffff, 7, 9, 65472},
	} {
		if got := RoCEv2Sport(tc.fl, tc.l, tc.r); got != tc.want {
			t.Errorf("RoCEv2Sport(%#x, %#x, %#x) = %d, want %d", tc.fl, tc.l, tc.r, got, tc.want)
		}
	}
}
