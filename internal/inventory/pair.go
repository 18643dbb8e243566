package inventory

import (
	"fmt"
	"net/netip"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// CheckPairCompatible rejects a pair of ports that cannot reach each other
// whatever the network does: different link layers, or RoCE GIDs of
// different versions or address families. Caught here, before any QP is
// built, these are a clear error instead of an RTR that succeeds and a
// retry-exceeded completion later. The error is a *probe.Error of class
// invalid-gid.
func CheckPairCompatible(a, b probe.Port) error {
	an, bn := portLabel(a), portLabel(b)
	fail := func(cause, fix string) error {
		return &probe.Error{Class: probe.ClassInvalidGID, Cause: cause, Fix: fix}
	}
	if a.LinkLayer != b.LinkLayer {
		return fail(fmt.Sprintf("link layer mismatch: %s is %s, %s is %s", an, a.LinkLayer, bn, b.LinkLayer),
			"pair ports of the same link layer; an InfiniBand port cannot reach an Ethernet one")
	}
	if a.LinkLayer == LayerIB {
		return nil // routed by LID; every IB GID is the same kind
	}
	for _, p := range []probe.Port{a, b} {
		if p.GID == "" {
			return fail(fmt.Sprintf("%s has no GID chosen (%s)", portLabel(p), orDefault(p.GIDReason, "no reason recorded")),
				"run `rdmamesh doctor` on that node and fix the failing gid check")
		}
	}
	at, errA := ParseGIDType(a.GIDType)
	bt, errB := ParseGIDType(b.GIDType)
	if errA != nil || errB != nil {
		return fail(fmt.Sprintf("unknown GID type: %s has %q, %s has %q", an, a.GIDType, bn, b.GIDType),
			"both ends need a readable RoCE version; check gid_attrs/types on each node")
	}
	if at != bt {
		return fail(fmt.Sprintf("RoCE version mismatch: %s uses GID %d (%s), %s uses GID %d (%s); v1 and v2 do not interoperate and the QP would end in retry-exceeded",
			an, a.GIDIndex, at, bn, b.GIDIndex, bt),
			"select the same version on both ends, e.g. --gid version=v2 on every worker")
	}
	af, errA := gidFamily(a.GID)
	bf, errB := gidFamily(b.GID)
	if errA != nil || errB != nil {
		return fail(fmt.Sprintf("unparseable GID: %s %q, %s %q", an, a.GID, bn, b.GID), "report this as a bug with both inventories")
	}
	if af != bf {
		return fail(fmt.Sprintf("address family mismatch: %s uses GID %d (%s %s), %s uses GID %d (%s %s)",
			an, a.GIDIndex, af, a.GID, bn, b.GIDIndex, bf, b.GID),
			"select entries of one family on both ends, e.g. --gid subnet=<shared CIDR>")
	}
	return nil
}

func gidFamily(s string) (string, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return "", err
	}
	if a.Is4() || a.Is4In6() {
		return "IPv4", nil
	}
	return "IPv6", nil
}

func portLabel(p probe.Port) string { return fmt.Sprintf("%s/%d", p.Device, p.Port) }
