package inventory

import (
	"errors"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func TestCheckPairCompatible(t *testing.T) {
	v2v4 := probe.Port{Device: "mlx5_0", Port: 1, LinkLayer: LayerEth, GIDIndex: 3, GID: "::ffff:10.0.0.1", GIDType: TypeRoCEv2}
	v2v4b := probe.Port{Device: "mlx5_0", Port: 1, LinkLayer: LayerEth, GIDIndex: 7, GID: "::ffff:10.0.0.2", GIDType: TypeRoCEv2}
	v1v4 := probe.Port{Device: "mlx4_1", Port: 2, LinkLayer: LayerEth, GIDIndex: 1, GID: "::ffff:10.0.0.3", GIDType: TypeRoCEv1}
	v2v6 := probe.Port{Device: "mlx5_0", Port: 1, LinkLayer: LayerEth, GIDIndex: 3, GID: "2001:db8::5", GIDType: TypeRoCEv2}
	ib := probe.Port{Device: "mlx5_0", Port: 1, LinkLayer: LayerIB, GID: "fe80::1", GIDType: TypeRoCEv1}
	ib2 := probe.Port{Device: "mlx5_3", Port: 1, LinkLayer: LayerIB, GID: "fe80::2", GIDType: TypeRoCEv1}
	none := probe.Port{Device: "mlx5_1", Port: 1, LinkLayer: LayerEth, GIDIndex: -1, GIDReason: "no usable GID"}
	cases := []struct {
		name string
		a, b probe.Port
		want string // "" = compatible
	}{
		{"same v2 IPv4", v2v4, v2v4b, ""},
		{"IB pair", ib, ib2, ""},
		{"v1 vs v2", v2v4, v1v4, "RoCE version mismatch: mlx5_0/1 uses GID 3 (RoCE v2), mlx4_1/2 uses GID 1 (IB/RoCE v1)"},
		{"IPv4 vs IPv6", v2v4, v2v6, "address family mismatch: mlx5_0/1 uses GID 3 (IPv4 ::ffff:10.0.0.1)"},
		{"IB vs Ethernet", ib, v2v4, "link layer mismatch: mlx5_0/1 is InfiniBand, mlx5_0/1 is Ethernet"},
		{"no GID", v2v4, none, "mlx5_1/1 has no GID chosen (no usable GID)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, swap := range []bool{false, true} {
				a, b := c.a, c.b
				if swap {
					a, b = b, a
				}
				err := CheckPairCompatible(a, b)
				if c.want == "" {
					if err != nil {
						t.Fatalf("unexpected error: %v", err)
					}
					continue
				}
				var pe *probe.Error
				if !errors.As(err, &pe) || pe.Class != probe.ClassInvalidGID || pe.Fix == "" {
					t.Fatalf("err = %#v, want a classified invalid-gid error with a fix", err)
				}
				if !swap && !strings.Contains(pe.Cause, c.want) {
					t.Fatalf("cause %q does not contain %q", pe.Cause, c.want)
				}
			}
		})
	}
}

// TestFixturePairs runs the pair check over what two fixture nodes publish.
func TestFixturePairs(t *testing.T) {
	auto := GIDPolicy{Mode: ModeAuto}
	v4 := scanFixture(t, "rxe-softroce").Ports(auto)[0]
	v6 := scanFixture(t, "roce-ipv6-only").Ports(auto)[0]
	v1 := scanFixture(t, "mlx4-vpi-ib-eth").Ports(auto)[1]
	cx5 := scanFixture(t, "cx5-roce-v4-index2").Ports(auto)[1]
	if err := CheckPairCompatible(v4, cx5); err != nil {
		t.Errorf("rxe ↔ cx5 IPv4 v2: %v", err)
	}
	if err := CheckPairCompatible(v4, v6); err == nil || !strings.Contains(err.Error(), "address family") {
		t.Errorf("IPv4 ↔ IPv6: %v", err)
	}
	if err := CheckPairCompatible(cx5, v1); err == nil || !strings.Contains(err.Error(), "RoCE version") {
		t.Errorf("v2 ↔ v1: %v", err)
	}
}
