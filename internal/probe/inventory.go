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
