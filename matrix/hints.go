package matrix

import (
	"fmt"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// Suspect kinds.
const (
	KindHCA  = "hca"
	KindNode = "node"
	KindRail = "rail"
	KindPair = "pair"
	// With a topology (links.go): an HCA port or its cable to the leaf,
	// a cable between two switches, a switch.
	KindCable  = "cable"
	KindLink   = "link"
	KindSwitch = "switch"
	// KindSwitchGroup is a block of nodes sharing a label value (a leaf
	// switch, a rack): Suspect.Group names it, Suspect.Members lists them.
	KindSwitchGroup = "switch-group"
)

// classFix is the operator hint for a failure class when the provider did
// not attach one. Providers know more (which verb, which GID), so their Fix
// always wins; these only make sure no failure reaches a human without one.
func classFix(c probe.Class) string {
	switch c {
	case probe.ClassPortDown:
		return "bring the port up: check cable/optics, the switch port and that both ends use the same link layer (ibstat, ip link)"
	case probe.ClassRetryExceeded:
		return "packets are lost on the path: check cables/optics, switch port error counters and, on RoCE, PFC/ECN and the GID's route"
	case probe.ClassTimeout:
		return "check the path and both workers' load; re-run with a longer pair timeout to tell slowness from loss"
	case probe.ClassPeerLost:
		return "the remote worker is unreachable: check the rdmamesh worker service and the host"
	case probe.ClassInvalidGID:
		return "select a valid RoCE v2 GID index present on both ends (show_gids, gid_attrs/types)"
	case probe.ClassMTUMismatch:
		return "set the same MTU on both HCAs' netdevs and on the switch ports in between"
	case probe.ClassNoNetdev:
		return "the GID's netdev is not in the worker's network namespace: run the worker in the host netns or move the interface into it"
	case probe.ClassResource:
		return "raise the worker's memlock limit (ulimit -l unlimited, or IPC_LOCK in a container)"
	case probe.ClassSkipped:
		return "the endpoint was marked unusable: see the node's port inventory (unusable_why)"
	case probe.ClassInternal:
		return "report this as a bug with the worker log"
	case probe.ClassTester:
		return "the rdmamesh process ran out of its own resources: raise its open-file limit (LimitNOFILE) or free memory, then sweep again"
	case probe.ClassUnreachable:
		return "the control network, not the fabric: open the worker's API port to the coordinator and its peers (firewall, worker.api_advertise), then sweep again"
	}
	return "check both HCAs and the path between them"
}

// suspectFix is the hint for a suspect whose cells carry no Fix, or whose
// Fix cannot be right at this level (a cell does not know the whole node is
// unreachable).
func suspectFix(kind, node string, v Verdict, c probe.Class) string {
	switch v {
	case VerdictSlowLatency:
		switch kind {
		case KindNode:
			return "check PCIe width/NUMA placement, CPU load and the HCA's firmware"
		case KindHCA:
			return "check the HCA's PCIe link width/speed (lspci -vv LnkSta), its NUMA placement, firmware and the cable/switch port"
		case KindRail:
			return "check the rail's switches: congestion, PFC pause storms, QoS or adaptive-routing settings"
		case KindSwitchGroup:
			return fmt.Sprintf("check the switch serving %s: congestion, PFC pause storms and its uplinks' error counters", node)
		default:
			return "compare the switch route between these two ports (hop count, congestion, a degraded link)"
		}
	case VerdictLowBandwidth:
		switch kind {
		case KindNode:
			return "check PCIe width/NUMA placement, CPU load and the HCA's firmware"
		case KindHCA:
			return "check the port's negotiated rate and width (ibstat, ethtool), the HCA's PCIe link and the cable/optics"
		case KindRail:
			return "check the rail's switch uplinks, congestion control and oversubscription"
		case KindSwitchGroup:
			return fmt.Sprintf("check the uplinks of the switch serving %s: count, speed, errors and oversubscription", node)
		default:
			return "check the route between these two ports: a degraded switch link or an ECMP hash collision"
		}
	case VerdictUntested:
		if c == probe.ClassUnreachable {
			return classFix(c)
		}
		return fmt.Sprintf("check that the worker on %s joined the sweep and that its ports are usable", node)
	}
	if c == probe.ClassPeerLost && kind == KindNode {
		return fmt.Sprintf("the worker on %s is unreachable: check the rdmamesh worker service and the host", node)
	}
	if kind == KindRail {
		return "check the rail's switch, its subnet manager (IB) or PFC/VLAN configuration (RoCE) and its uplinks"
	}
	if kind == KindSwitchGroup {
		return fmt.Sprintf("check the switch serving %s: power, its ports and uplinks, whether the subnet manager (IB) "+
			"sees it, or its PFC/VLAN configuration (RoCE)", node)
	}
	return classFix(c)
}

// cellFix is the fix a single cell's report (JUnit) shows.
func cellFix(c *Result) string {
	switch c.Verdict {
	case VerdictFailed:
		if c.Error != nil && c.Error.Fix != "" {
			return c.Error.Fix
		}
		return classFix(c.Class)
	case VerdictSlowLatency, VerdictLowBandwidth:
		return suspectFix(KindPair, c.Src, c.Verdict, c.Class)
	case VerdictUntested:
		return "no result was recorded: let the sweep finish, or check that both workers were part of it"
	}
	return ""
}
