package lldp

import (
	"net"
	"strings"
	"time"
)

// Where a Neighbor was read.
const (
	SourceFrame = "lldp-frame" // an LLDPDU this process received
	SourceLLDPD = "lldpd"      // lldpd's table, through lldpcli
)

// Neighbor is the system at the other end of a local interface's link, as
// its LLDP announcement describes it.
type Neighbor struct {
	Interface         string // the local interface it was heard on
	ChassisID         string
	ChassisIDType     string // TypeMAC, TypeLocal, ...
	PortID            string
	PortIDType        string
	PortDescription   string
	SystemName        string
	SystemDescription string
	ManagementAddrs   []string
	TTL               time.Duration
	Source            string           // SourceFrame or SourceLLDPD
	From              net.HardwareAddr // the frame's sender (SourceFrame only)
	Seen              time.Time        // when the announcement was received (or read from lldpd)
}

// Neighbor is what du says about its sender, heard on ifname.
func (du *LLDPDU) Neighbor(ifname string, from net.HardwareAddr, seen time.Time) Neighbor {
	n := Neighbor{Interface: ifname, ChassisID: du.ChassisID.Value, ChassisIDType: du.ChassisID.Type,
		PortID: du.PortID.Value, PortIDType: du.PortID.Type, PortDescription: du.PortDescription,
		SystemName: du.SystemName, SystemDescription: du.SystemDescription,
		TTL: time.Duration(du.TTL) * time.Second, Source: SourceFrame, From: from, Seen: seen}
	for _, m := range du.ManagementAddrs {
		n.ManagementAddrs = append(n.ManagementAddrs, m.Addr)
	}
	return n
}

// Label names the neighbour's port for people: "leaf-1 port swp3", or by
// chassis ID when the switch sends no system name.
func (n Neighbor) Label() string {
	var b strings.Builder
	if n.SystemName != "" {
		b.WriteString(n.SystemName)
	} else {
		b.WriteString("chassis " + n.ChassisID)
	}
	b.WriteString(" port ")
	if n.PortIDType != TypeInterfaceName && n.PortIDType != TypeLocal && n.PortIDType != TypeInterfaceAlias {
		b.WriteString(n.PortIDType + " ")
	}
	b.WriteString(n.PortID)
	return b.String()
}

// msap is 802.1AB's identifier of one remote agent: its chassis and port.
func (n Neighbor) msap() string {
	return n.ChassisIDType + "\x00" + n.ChassisID + "\x00" + n.PortIDType + "\x00" + n.PortID
}

// One is an interface's single neighbour, or an AmbiguousError when it has
// several (something between the NIC and the switch forwards LLDP), or a
// NotHeardError when it has none.
func One(ifname string, ns []Neighbor) (Neighbor, error) {
	switch len(ns) {
	case 0:
		return Neighbor{}, &NotHeardError{Interface: ifname}
	case 1:
		return ns[0], nil
	}
	return Neighbor{}, &AmbiguousError{Interface: ifname, Neighbors: ns}
}
