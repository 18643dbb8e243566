package inventory

import (
	"fmt"
	"net/netip"

	"github.com/rdmamesh/rdmamesh/internal/counters"
)

// Host is what Scan found: RDMA devices, network devices and the process
// environment facts the preflight checks judge. It is a snapshot; scan again
// to refresh.
type Host struct {
	Devices  []Device `json:"devices"`
	Netdevs  []Netdev `json:"netdevs"`
	Warnings []string `json:"warnings,omitempty"` // unreadable or unparseable sysfs values

	// AddrsKnown is false when no address source was given; GID selection
	// then cannot tell whose IP a GID carries and says so in its reason.
	AddrsKnown bool `json:"-"`

	env env
	// neighbors is LookupNeighbors' answer; nil: nobody looked.
	neighbors *NeighborTable
	// ibNeighbors answers for InfiniBand ports (LookupIBNeighbors); nil:
	// nobody gave a subnet's view.
	ibNeighbors IBNeighborLookup
}

// env holds facts only the checks read; it stays out of the JSON because the
// checks' evidence already says everything an operator needs.
type env struct {
	modulesSeen bool // sys/module is visible
	modules     map[string]bool
	verbsClass  bool // sys/class/infiniband_verbs exists
	devIBSeen   bool // dev/infiniband exists
	devIB       map[string]bool
	access      func(path string) error
	memlock     Memlock
	memlockErr  error
	capEff      uint64
	capErr      error
	netnsMode   string
	netnsErr    error
	// defaultRoute is the netdev of this namespace's IPv4 default route
	// (proc/net/route); "" when none or unreadable.
	defaultRoute string
}

// Device is one RDMA device (/sys/class/infiniband/<name>).
type Device struct {
	Name     string `json:"name"`
	HCAType  string `json:"hca_type,omitempty"` // e.g. MT4119 (ConnectX-5)
	BoardID  string `json:"board_id,omitempty"`
	FWVer    string `json:"fw_ver,omitempty"`
	NodeGUID string `json:"node_guid,omitempty"`
	PCI      string `json:"pci,omitempty"`    // 0000:af:00.0; empty for rxe/siw
	NUMANode int    `json:"numa_node"`        // -1 when unknown
	Uverbs   string `json:"uverbs,omitempty"` // uverbsN, from sys/class/infiniband_verbs
	Ports    []Port `json:"ports"`
}

// Port is one port of a Device with its GID table.
type Port struct {
	Num       int    `json:"port"`
	State     Enum   `json:"state"`
	PhysState Enum   `json:"phys_state"`
	LinkLayer string `json:"link_layer"`
	Rate      Rate   `json:"rate"`
	RateRaw   string `json:"rate_raw,omitempty"`
	LID       uint16 `json:"lid"`
	SMLID     uint16 `json:"sm_lid"`
	GIDs      []GID  `json:"gids"` // used entries only, by index
	// RoCEDefaultMode is rdma_cm's per-port default from configfs, when
	// someone created sys/kernel/config/rdma_cm/<dev>; empty otherwise.
	RoCEDefaultMode string `json:"roce_default_mode,omitempty"`
	// Counters are the port's error and congestion counters that are not
	// zero, cumulative since the driver loaded (package counters).
	Counters []counters.Value `json:"counters,omitempty"`
}

// GID is one used GID table entry.
type GID struct {
	Index  int        `json:"index"`
	Addr   netip.Addr `json:"gid"`
	Type   string     `json:"type"`             // TypeRoCEv1 | TypeRoCEv2 ("" if unreadable)
	Netdev string     `json:"netdev,omitempty"` // from gid_attrs/ndevs; empty: none
}

// Netdev is one entry of /sys/class/net in this network namespace.
type Netdev struct {
	Name      string         `json:"name"`
	MTU       int            `json:"mtu"`
	OperState string         `json:"operstate"`
	Address   string         `json:"address,omitempty"` // link-layer address
	Addrs     []netip.Prefix `json:"addrs,omitempty"`
}

// Up treats "unknown" as up: virtual devices without carrier reporting
// (dummy, some tunnels) sit there while passing traffic.
func (n Netdev) Up() bool { return n.OperState == "up" || n.OperState == "unknown" }

func (n Netdev) has(a netip.Addr) bool {
	for _, p := range n.Addrs {
		if p.Addr().Unmap() == a.Unmap() {
			return true
		}
	}
	return false
}

// Netdev returns the named netdev of this namespace.
func (h *Host) Netdev(name string) (Netdev, bool) {
	for _, n := range h.Netdevs {
		if n.Name == name {
			return n, true
		}
	}
	return Netdev{}, false
}

// Device returns the named device.
func (h *Host) Device(name string) (*Device, bool) {
	for i := range h.Devices {
		if h.Devices[i].Name == name {
			return &h.Devices[i], true
		}
	}
	return nil, false
}

// portRef points at one port in rail order.
type portRef struct {
	dev  *Device
	port *Port
	rail int
}

func (r portRef) name() string { return fmt.Sprintf("%s/%d", r.dev.Name, r.port.Num) }

// rails lists every port in rail order: devices in natural name order (as
// Scan sorted them), then port number. Rails are stable as long as the set
// of devices is, which is what lets rail i of one node pair with rail i of
// another.
func (h *Host) rails() []portRef {
	var out []portRef
	for i := range h.Devices {
		d := &h.Devices[i]
		for j := range d.Ports {
			out = append(out, portRef{dev: d, port: &d.Ports[j], rail: len(out)})
		}
	}
	return out
}

// primaryNetdev is the netdev the port's lowest GID entry names: the port's
// own Ethernet interface on bare metal.
func (p *Port) primaryNetdev() string {
	for _, g := range p.GIDs {
		if g.Netdev != "" {
			return g.Netdev
		}
	}
	return ""
}

// RoCEMTU is the largest RoCE path MTU a netdev MTU carries once the RoCE v2
// headers (GRH/IP, UDP, BTH, extended headers and ICRC: 96 bytes in the
// kernel's budget) are taken off: 1500 → 1024, 4200 → 4096, 9000 → 4096.
// Active MTU is not in sysfs; for RoCE this is what the kernel derives it from.
func RoCEMTU(netdevMTU int) int {
	budget := netdevMTU - 96
	for _, m := range []int{4096, 2048, 1024, 512, 256} {
		if budget >= m {
			return m
		}
	}
	return 0
}
