package inventory

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// GID policy modes.
const (
	ModeAuto    = "auto"
	ModeIndex   = "index"
	ModeNetdev  = "netdev"
	ModeSubnet  = "subnet"
	ModeVersion = "version"
)

// GIDPolicy says which GID table entry a RoCE port tests with. InfiniBand
// ports always use index 0 unless Mode is index: IB routes by LID, and the
// other modes describe IP-based RoCE entries.
type GIDPolicy struct {
	Mode    string       // auto | index | netdev | subnet | version
	Index   int          // ModeIndex
	Netdev  string       // ModeNetdev
	Subnet  netip.Prefix // ModeSubnet, masked
	Version string       // ModeVersion: TypeRoCEv1 | TypeRoCEv2
}

// ParseGIDPolicy parses "auto", "index=3" (or just "3"), "netdev=eth1",
// "subnet=10.0.0.0/8" and "version=v2" (v1, v2, "RoCE v2", "IB/RoCE v1").
func ParseGIDPolicy(s string) (GIDPolicy, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == ModeAuto {
		return GIDPolicy{Mode: ModeAuto}, nil
	}
	if isDigits(s) {
		s = ModeIndex + "=" + s
	}
	key, val, ok := strings.Cut(s, "=")
	key, val = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(val)
	if !ok {
		return GIDPolicy{}, policyErr(s, "unknown policy")
	}
	if val == "" {
		return GIDPolicy{}, policyErr(s, "empty value")
	}
	switch key {
	case ModeIndex:
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 || n > 65535 {
			return GIDPolicy{}, policyErr(s, "index must be 0..65535")
		}
		return GIDPolicy{Mode: ModeIndex, Index: n}, nil
	case ModeNetdev:
		if len(val) > 15 || strings.ContainsAny(val, "/ \t") {
			return GIDPolicy{}, policyErr(s, "not a netdev name")
		}
		return GIDPolicy{Mode: ModeNetdev, Netdev: val}, nil
	case ModeSubnet:
		p, err := netip.ParsePrefix(val)
		if err != nil {
			return GIDPolicy{}, policyErr(s, "subnet must be a CIDR such as 10.0.0.0/8")
		}
		return GIDPolicy{Mode: ModeSubnet, Subnet: p.Masked()}, nil
	case ModeVersion:
		t, err := ParseGIDType(val)
		if err != nil {
			return GIDPolicy{}, policyErr(s, "version must be v1 or v2")
		}
		return GIDPolicy{Mode: ModeVersion, Version: t}, nil
	}
	return GIDPolicy{}, policyErr(s, "unknown mode "+strconv.Quote(key))
}

func policyErr(s, why string) error {
	return fmt.Errorf("gid policy %q: %s (use auto, index=N, netdev=NAME, subnet=CIDR or version=v1|v2)", s, why)
}

// String gives the policy back in ParseGIDPolicy's syntax.
func (p GIDPolicy) String() string {
	switch p.Mode {
	case ModeIndex:
		return fmt.Sprintf("index=%d", p.Index)
	case ModeNetdev:
		return "netdev=" + p.Netdev
	case ModeSubnet:
		return "subnet=" + p.Subnet.String()
	case ModeVersion:
		return "version=" + ShortType(p.Version)
	}
	return ModeAuto
}
