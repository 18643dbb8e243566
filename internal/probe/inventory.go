package probe

// Port is one HCA port as a worker reports it: enough for the coordinator to
// plan rails and for an operator to see which GID a test will use and why.
type Port struct {
	Device       string  `json:"device"`
	Port         int     `json:"port"`
	Rail         int     `json:"rail"`
	LinkLayer    string  `json:"link_layer"` // InfiniBand | Ethernet
	State        string  `json:"state"`      // ACTIVE, DOWN, INIT, ...
	RateGbps     float64 `json:"rate_gbps"`
	MTU          int     `json:"mtu"` // active MTU, bytes
	LID          uint16  `json:"lid,omitempty"`
	GIDIndex     int     `json:"gid_index"`
	GID          string  `json:"gid,omitempty"`
	GIDType      string  `json:"gid_type,omitempty"`
	GIDReason    string  `json:"gid_reason,omitempty"`
	Netdev       string  `json:"netdev,omitempty"`
	IP           string  `json:"ip,omitempty"`
	Usable       bool    `json:"usable"`
	UnusableWhy  string  `json:"unusable_why,omitempty"`
	FailedChecks []Check `json:"failed_checks,omitempty"`
	// Neighbor is the switch port this port is cabled to, or why that is
	// not known; nil when nobody looked (the simulated fabric, a worker
	// without a neighbour source).
	Neighbor *Neighbor `json:"neighbor,omitempty"`
}

// Neighbor is the switch port at the other end of a port's cable, as the
// switch announces it over LLDP. Either the identity fields are set or
// Unknown says why they are not: nothing is guessed. It holds only what
// stays the same between announcements, so a neighbour that keeps
// announcing does not make a new inventory generation.
type Neighbor struct {
	Interface       string `json:"interface,omitempty"` // the local netdev it was heard on (or listened on)
	SystemName      string `json:"system_name,omitempty"`
	PortID          string `json:"port_id,omitempty"`
	PortIDType      string `json:"port_id_type,omitempty"` // interface-name, local, mac, network-address, ...
	PortDescription string `json:"port_description,omitempty"`
	ChassisID       string `json:"chassis_id,omitempty"`
	ChassisIDType   string `json:"chassis_id_type,omitempty"` // mac, network-address, local, interface-name, ...
	TTLSeconds      int    `json:"ttl_s,omitempty"`           // how long the switch said its announcement holds
	Source          string `json:"source,omitempty"`          // lldp-frame | lldpd: where it was read, or asked
	Unknown         string `json:"unknown,omitempty"`         // why no neighbour is known; the identity fields are empty then
}

// Check is one host preflight finding.
type Check struct {
	Name     string `json:"name"`
	Status   string `json:"status"` // ok | warn | fail
	Evidence string `json:"evidence,omitempty"`
	Cause    string `json:"cause,omitempty"`
	Fix      string `json:"fix,omitempty"`
}

// Inventory is a worker's full self-description. It is too large for
// memberlist node meta, so it travels in push/pull state and over the API.
type Inventory struct {
	Version    int               `json:"version"`
	Node       string            `json:"node"`
	Generation uint64            `json:"generation"`
	APIAddr    string            `json:"api_addr"`
	Provider   string            `json:"provider"` // verbs | sim
	Labels     map[string]string `json:"labels,omitempty"`
	Ports      []Port            `json:"ports"`
	Checks     []Check           `json:"checks,omitempty"`
	// Live lists the worker's always-on probe ports (one per rail it
	// probes on), which the coordinator puts in the live plan.
	Live []LiveAddr `json:"live,omitempty"`
}

// LiveAddr is one probe port's address: a UD queue pair on the port of
// Rail, reached by GID (RoCE) or LID (InfiniBand).
type LiveAddr struct {
	Rail   int    `json:"rail"`
	Device string `json:"device"`
	GID    string `json:"gid,omitempty"`
	LID    uint16 `json:"lid,omitempty"`
	QPN    uint32 `json:"qpn"`
	QKey   uint32 `json:"qkey"`
}
