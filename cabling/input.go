package cabling

// Neighbor is the far end of a cable as the near end heard it: the
// strings an LLDP announcement carries, as the switch wrote them, or
// ibnetdiscover's peer (the switch's NodeDescription name and its port
// number). Nothing here is interpreted before matching.
type Neighbor struct {
	SystemName      string `json:"system_name,omitempty"`
	PortID          string `json:"port_id,omitempty"`
	PortIDType      string `json:"port_id_type,omitempty"` // interface-name, local, mac, ...
	PortDescription string `json:"port_description,omitempty"`
	ChassisID       string `json:"chassis_id,omitempty"` // a GUID on InfiniBand
}

// HostPort is one HCA port as its node's worker reports it.
type HostPort struct {
	Node   string `json:"node"`
	Device string `json:"device,omitempty"`
	Rail   int    `json:"rail"`
	// Down is a physical link that is not up: no cable, or a dead one.
	Down bool `json:"down,omitempty"`
	// Neighbor is nil when nothing was heard; Why then says why, as the
	// worker put it (no LLDP on the switch, firmware eating the frames).
	Neighbor *Neighbor `json:"neighbor,omitempty"`
	Why      string    `json:"why,omitempty"`
}

// SwitchPort is one entry of a switch's own neighbour table (its LLDP
// agent, or ibnetdiscover's line for a switch port): how cables between
// switches are seen, since no host hears them. A switch counts as read
// when it reports at least one entry; a read switch with no entry on a
// planned port has nothing there.
type SwitchPort struct {
	Switch   string   `json:"switch"` // the reporting switch, as it names itself
	Port     string   `json:"port"`   // its own port, as it names it: swp33
	Neighbor Neighbor `json:"neighbor"`
}

// Path is a traced flow: the switches it crossed in order, from the
// source HCA's leaf to the destination's. "" is a hop that did not
// answer. The first answering hop is where the source is cabled only
// when it is the first hop, and likewise the last for the destination.
type Path struct {
	SrcNode string   `json:"src_node"`
	SrcRail int      `json:"src_rail"`
	DstNode string   `json:"dst_node"`
	DstRail int      `json:"dst_rail"`
	Hops    []string `json:"hops"`
}

// Observed is everything seen of the fabric's cabling.
type Observed struct {
	Hosts    []HostPort   `json:"hosts,omitempty"`
	Switches []SwitchPort `json:"switches,omitempty"`
	Paths    []Path       `json:"paths,omitempty"`
}
