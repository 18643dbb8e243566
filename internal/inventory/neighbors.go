package inventory

import (
	"errors"
	"fmt"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/lldp"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// NeighborTable is a neighbour lookup's answer.
type NeighborTable struct {
	// ByNetdev has an entry for every netdev asked about: its switch
	// neighbour, or Unknown saying why there is none.
	ByNetdev map[string]probe.Neighbor
	// Frames is true when the lookup read LLDP frames itself, which takes
	// CAP_NET_RAW (the lldp_frames check).
	Frames bool
	// About says where the answers came from, for doctor's heading.
	About string
}

// NeighborLookup answers for the netdevs it is given: each Ethernet port's
// own netdev, in rail order.
type NeighborLookup func(netdevs []string) NeighborTable

// IBNeighbor is every InfiniBand port's answer: LLDP is Ethernet's, and an
// InfiniBand port's peer is in the subnet manager's records.
const IBNeighbor = "InfiniBand: the neighbour is in the subnet manager's view (ibnetdiscover), not LLDP"

// IBNeighborLookup finds an InfiniBand port's neighbour in the subnet's
// view (ibnetdiscover's output) by its device's node GUID, as sysfs
// writes it, and its port number; Unknown says why it is not there.
type IBNeighborLookup func(nodeGUID string, port int) probe.Neighbor

// LookupIBNeighbors gives the InfiniBand ports their neighbours from
// lookup; IBNeighborSource names the source in the ports' Source.
func (h *Host) LookupIBNeighbors(lookup IBNeighborLookup) { h.ibNeighbors = lookup }

// IBNeighborSource is the Source of a neighbour read from ibnetdiscover.
const IBNeighborSource = "ibnetdiscover"

// LookupNeighbors asks lookup, once, for the switch neighbours of the
// Ethernet ports (of device only, when it is not empty), and keeps the
// answer for Ports, Inventory and Diagnose. Without it ports carry no
// neighbour at all.
func (h *Host) LookupNeighbors(device string, lookup NeighborLookup) {
	var netdevs []string
	seen := map[string]bool{}
	for _, r := range h.rails() {
		if (device != "" && r.dev.Name != device) || r.port.LinkLayer != LayerEth {
			continue
		}
		if nd := r.port.primaryNetdev(); nd != "" && !seen[nd] {
			seen[nd] = true
			netdevs = append(netdevs, nd)
		}
	}
	t := lookup(netdevs)
	h.neighbors = &t
}

// portNeighbor is a port's entry in the looked-up table. LLDP arrives on
// the port's own netdev (its first GID's), not on a VLAN or macvlan the
// chosen GID may belong to.
func (h *Host) portNeighbor(r portRef) *probe.Neighbor {
	if r.port.LinkLayer != LayerEth && h.ibNeighbors != nil {
		n := h.ibNeighbors(r.dev.NodeGUID, r.port.Num)
		return &n
	}
	if h.neighbors == nil {
		return nil
	}
	if r.port.LinkLayer != LayerEth {
		return &probe.Neighbor{Unknown: IBNeighbor}
	}
	nd := r.port.primaryNetdev()
	if nd == "" {
		return &probe.Neighbor{Unknown: "the port's GID table names no netdev, so there is no interface to hear LLDP on"}
	}
	n, ok := h.neighbors.ByNetdev[nd]
	if !ok {
		return &probe.Neighbor{Interface: nd, Unknown: "not looked up: " + nd + " belongs to a device outside --device"}
	}
	return &n
}

// neighborOf is what the inventory keeps of an LLDP neighbour: its
// identity, not when it was last heard, so announcements that repeat do
// not change the inventory.
func neighborOf(n lldp.Neighbor) probe.Neighbor {
	return probe.Neighbor{Interface: n.Interface, SystemName: n.SystemName, PortID: n.PortID, PortIDType: n.PortIDType,
		PortDescription: n.PortDescription, ChassisID: n.ChassisID, ChassisIDType: n.ChassisIDType,
		TTLSeconds: int(n.TTL / time.Second), Source: n.Source}
}

func unknownNeighbor(netdev, source string, err error) probe.Neighbor {
	return probe.Neighbor{Interface: netdev, Source: source, Unknown: err.Error()}
}

// fromLLDPD is one netdev's entry from lldpd's table.
func fromLLDPD(netdev string, heard []lldp.Neighbor) probe.Neighbor {
	n, err := lldp.One(netdev, heard)
	var nh *lldp.NotHeardError
	if errors.As(err, &nh) {
		nh.Source = lldp.SourceLLDPD
	}
	if err != nil {
		return unknownNeighbor(netdev, lldp.SourceLLDPD, err)
	}
	return neighborOf(n)
}

// lldpFramesFinding says whether this process may read LLDP frames, when
// its neighbour lookup reads them.
func (h *Host) lldpFramesFinding() (finding, bool) {
	if h.neighbors == nil || !h.neighbors.Frames {
		return finding{}, false
	}
	f := finding{Check: probe.Check{Name: "lldp_frames", Status: StatusOK}}
	switch {
	case h.env.capErr != nil:
		f.Status = StatusWarn
		f.Evidence = "proc/self/status unreadable: " + h.env.capErr.Error()
		f.Cause = "cannot tell whether LLDP frames can be read (that takes CAP_NET_RAW)"
		f.Fix = "run doctor where /proc is mounted"
	case h.env.capEff&(1<<capNetRaw) != 0:
		f.Evidence = fmt.Sprintf("CapEff %016x includes CAP_NET_RAW: LLDP frames can be read", h.env.capEff)
	default:
		f.Status = StatusWarn
		f.Evidence = fmt.Sprintf("CapEff %016x lacks CAP_NET_RAW", h.env.capEff)
		f.Cause = "reading LLDP frames takes an AF_PACKET socket, which needs CAP_NET_RAW: no port's switch neighbour can be read"
		f.Fix = "run as root, or grant CAP_NET_RAW (setcap cap_net_raw+ep on the binary; AmbientCapabilities=CAP_NET_RAW in a systemd unit; " +
			"capabilities.add: [NET_RAW] in Kubernetes), or read lldpd's neighbours instead (doctor --lldp-source lldpd)"
	}
	return f, true
}
