package inventory

import (
	"errors"
	"strings"
	"testing"
)

func TestSelectPolicies(t *testing.T) {
	cases := []struct {
		fixture, dev string
		port         int
		policy       string
		index        int    // -1: expect an error
		reason       string // substring of the reason or error
		warn         bool
	}{
		{"cx5-roce-v4-index2", "rocep101s0f1", 1, "auto", 2, "index 2: RoCE v2, IPv4 192.168.99.100 on enp101s0f1np1 (up); skipped 0-1: link-local", false},
		{"cx5-roce-v4-index2", "rocep101s0f0", 1, "auto", 0, "link-local", true},
		{"cx5-roce-v4-index2", "rocep101s0f1", 1, "index=1", 1, "(policy index=1)", false},
		{"cx5-roce-v4-index2", "rocep101s0f1", 1, "index=7", -1, "GID index 7 is empty on rocep101s0f1/1 (used: 0-2)", false},
		{"show-gids-v1-v2", "mlx5_4", 1, "auto", 3, "skipped 0, 2: IB/RoCE v1; 1: link-local", false},
		{"show-gids-v1-v2", "mlx5_4", 1, "netdev=p1p1.100", 7, "IPv4 10.100.4.14 on p1p1.100", false},
		{"show-gids-v1-v2", "mlx5_4", 1, "subnet=10.100.0.0/16", 7, "skipped 0-5: outside 10.100.0.0/16; 6: IB/RoCE v1", false},
		{"show-gids-v1-v2", "mlx5_4", 1, "subnet=2001:db8::/32", 5, "IPv6 2001:db8:4::14", false},
		{"show-gids-v1-v2", "mlx5_4", 1, "version=v1", 2, "index 2: IB/RoCE v1, IPv4 10.10.4.14", false},
		{"show-gids-v1-v2", "mlx5_4", 1, "netdev=eth9", -1, "no usable GID on mlx5_4/1 (policy netdev=eth9): 0-7: not on eth9", false},
		{"mlx4-vpi-ib-eth", "mlx4_1", 1, "auto", 0, "InfiniBand, GID fe80::f452:1403:7b:cba1; routed by LID 0x2", false},
		{"mlx4-vpi-ib-eth", "mlx4_1", 1, "version=v2", 0, "applies to RoCE ports only", false},
		{"mlx4-vpi-ib-eth", "mlx4_1", 2, "auto", 1, "index 1: IB/RoCE v1, IPv4 192.168.21.1", true},
		{"mlx4-vpi-ib-eth", "mlx4_1", 2, "version=v2", -1, "0-1: IB/RoCE v1", false},
		{"container-no-netdev", "mlx5_0", 1, "auto", 7, "skipped 0-3: netdev ens785f0 not in this network namespace; 4-5: 192.168.1.202 is not on net1 here; 6: IB/RoCE v1", false},
		{"container-no-netdev", "mlx5_0", 1, "index=3", -1, "not usable here: netdev ens785f0 not in this network namespace", false},
		{"container-no-netdev", "mlx5_1", 1, "auto", -1, "0-1: netdev ens785f1 not in this network namespace; 2-3: no netdev", false},
		{"link-layer-mismatch-down", "mlx5_1", 1, "auto", 3, "on enp59s0f1np1 (down)", true},
		{"roce-ipv6-only", "mlx5_0", 1, "auto", 3, "IPv6 2001:db8:10::5 on ens2f0np0 (up); skipped 0, 2: IB/RoCE v1; 1: link-local", false},
		{"rxe-softroce", "rxe0", 1, "auto", 1, "index 1: RoCE v2, IPv4 10.0.2.15 on eth0 (up); skipped 0: link-local", false},
		{"ib-8hca", "mlx5_11", 1, "auto", 0, "routed by LID 0x21", false},
		{"ib-no-sm", "mlx5_0", 1, "auto", 0, "no LID assigned yet", false},
	}
	for _, c := range cases {
		t.Run(c.fixture+"/"+c.dev+"/"+c.policy, func(t *testing.T) {
			h := scanFixture(t, c.fixture)
			pol, err := ParseGIDPolicy(c.policy)
			if err != nil {
				t.Fatal(err)
			}
			sel, err := h.Select(c.dev, c.port, pol)
			if c.index < 0 {
				var se *SelectionError
				if !errors.As(err, &se) || !strings.Contains(se.Msg, c.reason) || se.Cause == "" || se.Fix == "" {
					t.Fatalf("err = %#v, want a SelectionError containing %q with cause and fix", err, c.reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sel.GID.Index != c.index || !strings.Contains(sel.Reason, c.reason) || (sel.Warning != "") != c.warn {
				t.Fatalf("got index %d reason %q warning %q; want %d, %q, warn %v",
					sel.GID.Index, sel.Reason, sel.Warning, c.index, c.reason, c.warn)
			}
		})
	}
}

func TestParseGIDPolicy(t *testing.T) {
	good := map[string]string{"": "auto", "auto": "auto", "3": "index=3", "index=3": "index=3",
		"netdev=eth1": "netdev=eth1", "subnet=10.1.2.3/8": "subnet=10.0.0.0/8", "version=v2": "version=v2",
		"version=RoCE v2": "version=v2", "VERSION=IB/RoCE v1": "version=v1", " index = 0 ": "index=0"}
	for in, want := range good {
		p, err := ParseGIDPolicy(in)
		if err != nil || p.String() != want {
			t.Errorf("ParseGIDPolicy(%q) = %q, %v; want %q", in, p, err, want)
		}
	}
	for _, bad := range []string{"best", "index=-1", "index=x", "netdev=", "netdev=a/b", "subnet=10.0.0.0", "version=v3", "color=blue"} {
		if _, err := ParseGIDPolicy(bad); err == nil {
			t.Errorf("ParseGIDPolicy(%q) accepted", bad)
		} else if !strings.Contains(err.Error(), "use auto, index=N") {
			t.Errorf("ParseGIDPolicy(%q) error %q does not list the accepted forms", bad, err)
		}
	}
}
