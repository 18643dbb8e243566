package inventory

import (
	"fmt"
	"io"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/lldp"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// writeNeighbors lists each port's switch neighbour, when they were looked
// up.
func (r *Report) writeNeighbors(w io.Writer) {
	looked := false
	for _, p := range r.Ports {
		looked = looked || p.Neighbor != nil
	}
	if !looked {
		return
	}
	fmt.Fprintf(w, "\nNEIGHBOURS (%s)\n", r.NeighborSource)
	var ib []string // one line for them all: they share the one answer
	for _, p := range r.Ports {
		switch {
		case p.Neighbor == nil:
		case p.LinkLayer == LayerIB && p.Neighbor.Unknown == IBNeighbor:
			ib = append(ib, portLabel(p))
		default:
			where := portLabel(p)
			if p.Neighbor.Interface != "" {
				where += " (" + p.Neighbor.Interface + ")"
			}
			fmt.Fprintf(w, "  %s neighbour: %s\n", where, NeighborText(*p.Neighbor, p.LinkLayer))
		}
	}
	if len(ib) > 0 {
		fmt.Fprintf(w, "  %s: %s\n", strings.Join(ib, ", "), IBNeighbor)
	}
}

// NeighborText is one port's neighbour for people: `leaf-1 port swp3
// "gpu01 eth1" (chassis 52:54:00:12:34:56, TTL 120s, from LLDP frames)`,
// or "unknown: " and the reason.
func NeighborText(n probe.Neighbor, linkLayer string) string {
	if n.Unknown != "" {
		if linkLayer == LayerIB && n.Source != IBNeighborSource {
			return n.Unknown
		}
		return "unknown: " + n.Unknown
	}
	var b strings.Builder
	b.WriteString(lldp.Neighbor{SystemName: n.SystemName, ChassisID: n.ChassisID, PortID: n.PortID, PortIDType: n.PortIDType}.Label())
	if n.PortDescription != "" && n.PortDescription != n.PortID {
		fmt.Fprintf(&b, " %q", n.PortDescription)
	}
	b.WriteString(" (chassis ")
	if n.ChassisIDType != lldp.TypeMAC {
		b.WriteString(n.ChassisIDType + " ")
	}
	b.WriteString(n.ChassisID)
	if n.TTLSeconds > 0 {
		fmt.Fprintf(&b, ", TTL %ds", n.TTLSeconds)
	}
	switch n.Source {
	case lldp.SourceFrame:
		b.WriteString(", from LLDP frames")
	case lldp.SourceLLDPD:
		b.WriteString(", from lldpd")
	case IBNeighborSource:
		b.WriteString(", from ibnetdiscover")
	}
	b.WriteString(")")
	return b.String()
}
