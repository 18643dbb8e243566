package verbs

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// gidEntry is one populated GID table slot.
type gidEntry struct {
	Index  int
	Raw    [16]byte
	Type   string // "RoCE v2", "IB/RoCE v1" (sysfs spelling)
	Netdev string // "" for InfiniBand or when the netdev is not visible
}

func (g gidEntry) addr() netip.Addr { return netip.AddrFrom16(g.Raw) }

// String is the GID as ibv_devinfo and sysfs print it (IPv6 text, with
// IPv4-mapped entries as ::ffff:a.b.c.d).
func (g gidEntry) String() string { return g.addr().String() }

// ipv4 is the IPv4 address of an IPv4-mapped GID, or "".
func (g gidEntry) ipv4() string {
	a := g.addr()
	if a.Is4In6() {
		return a.Unmap().String()
	}
	return ""
}

func gidTypeName(t int) string {
	switch t {
	case 0, 1:
		return "IB/RoCE v1"
	case 2:
		return "RoCE v2"
	}
	return ""
}

// parseGIDString is the inverse of gidEntry.String for QP info from peers.
func parseGIDString(s string) ([16]byte, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return [16]byte{}, fmt.Errorf("gid %q: %v", s, err)
	}
	return a.As16(), nil
}

// gidScore ranks RoCE entries the way perftest and NCCL do: an IPv4-mapped
// RoCE v2 address is what routes in nearly every deployment, then a global
// IPv6 one; link-local and v1 entries only if nothing better exists.
func gidScore(g gidEntry) int {
	a := g.addr()
	v2 := g.Type == "RoCE v2"
	switch {
	case v2 && a.Is4In6():
		return 4
	case v2 && !a.IsLinkLocalUnicast():
		return 3
	case v2:
		return 2
	case a.Is4In6():
		return 1
	}
	return 0
}

// chooseGID picks the GID a test uses on one port and says why, so the
// inventory shows the reason next to the choice.
func chooseGID(dev string, port int, linkLayer string, entries []gidEntry, pol gidPolicy) (gidEntry, string, *probe.Error) {
	on := fmt.Sprintf("%s port %d", dev, port)
	if !pol.auto {
		for _, g := range entries {
			if g.Index != pol.index {
				continue
			}
			if linkLayer == "Ethernet" && g.Netdev == "" {
				return g, "", &probe.Error{Class: probe.ClassNoNetdev, Verb: "ibv_query_gid",
					Cause: fmt.Sprintf("GID index %d on %s (%s) has no netdev in this network namespace", g.Index, on, g),
					Fix:   "give the container the RoCE netdev (macvlan/SR-IOV through multus) or choose another GID index"}
			}
			return g, fmt.Sprintf("index=%d requested (%s)", g.Index, describe(g)), nil
		}
		return gidEntry{}, "", &probe.Error{Class: probe.ClassInvalidGID, Verb: "ibv_query_gid",
			Cause: fmt.Sprintf("GID index %d is empty on %s (populated: %s)", pol.index, on, indexes(entries)),
			Fix:   "use --gid auto, or one of the populated indexes"}
	}
	if len(entries) == 0 {
		return gidEntry{}, "", &probe.Error{Class: probe.ClassInvalidGID, Verb: "ibv_query_gid",
			Cause: "the GID table of " + on + " is empty",
			Fix:   "RoCE: give the netdev an IP address (the kernel fills the table from it); IB: check the port is ACTIVE"}
	}
	if linkLayer != "Ethernet" {
		for _, g := range entries {
			if g.Index == 0 {
				return g, "auto: InfiniBand port GID (index 0)", nil
			}
		}
		g := entries[0]
		return g, fmt.Sprintf("auto: InfiniBand, lowest populated index %d", g.Index), nil
	}
	best, bestScore, hidden := -1, -1, 0
	for i, g := range entries {
		if g.Netdev == "" {
			hidden++
			continue
		}
		if s := gidScore(g); s > bestScore {
			best, bestScore = i, s
		}
	}
	if best < 0 {
		return gidEntry{}, "", &probe.Error{Class: probe.ClassNoNetdev, Verb: "ibv_query_gid",
			Cause: fmt.Sprintf("none of the %d GIDs on %s has its netdev in this network namespace", hidden, on),
			Fix:   "give the container the RoCE netdev (macvlan/SR-IOV through multus); check `rdma system` netns mode"}
	}
	g := entries[best]
	why := map[int]string{4: "IPv4-mapped RoCE v2", 3: "global IPv6 RoCE v2 (no IPv4-mapped entry)",
		2: "link-local RoCE v2 (no routable entry)", 1: "IPv4-mapped RoCE v1 (no v2 entry)", 0: "RoCE v1 (no v2 entry)"}[bestScore]
	return g, fmt.Sprintf("auto: %s, %s", why, describe(g)), nil
}

func describe(g gidEntry) string {
	parts := []string{g.Type}
	if ip := g.ipv4(); ip != "" {
		parts = append(parts, ip)
	} else {
		parts = append(parts, g.String())
	}
	if g.Netdev != "" {
		parts = append(parts, "on "+g.Netdev)
	}
	return strings.Join(parts, " ")
}

func indexes(entries []gidEntry) string {
	if len(entries) == 0 {
		return "none"
	}
	var b strings.Builder
	for i, g := range entries {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d", g.Index)
	}
	return b.String()
}

// needsGRH says whether packets to a peer need a global route header, for
// RC connections and UD address handles alike: always on RoCE (routing is
// by GID); on InfiniBand when the peer has no LID, or has a GID in
// another subnet (its 64-bit prefix differs from ours).
func needsGRH(roce bool, peer [16]byte, hasGID bool, peerLID uint16, self [16]byte) bool {
	return roce || peerLID == 0 || (hasGID && [8]byte(peer[:8]) != [8]byte(self[:8]))
}
