// Package cabling checks a fabric's cables against its plan: for every
// HCA port and every cable between switches the plan (a
// topology.Topology) has, what the plan expects at the far end, what
// was seen there and a verdict (ok, swapped, wrong-rail, wrong-leaf,
// wrong-switch, wrong-port, missing, no-evidence), and for whatever is
// seen that the plan lacks, unexpected or unknown-switch. Survey does
// without a plan, against the fabric's own majority. It is pure: it
// reads its arguments and writes only to the writers it is given.
//
// # Evidence
//
// An HCA's far end is its LLDP neighbour as its worker heard it
// (HostPort), or else the switch all its traced paths agree on: a
// path's first hop is the source's leaf, its last the destination's
// (Path). Paths name switches, not ports, so they confirm a leaf and
// never a port. A cable between switches is read from the switches'
// own neighbour tables (SwitchPort): its lower-tier end's line, or else
// the line of whatever port heard that end. On InfiniBand the tables
// come from ibnetdiscover: Observe turns its parsed topology into the
// same evidence. With neither LLDP nor a path a port is no-evidence,
// never ok.
//
// # Matching a neighbour to a plan switch port
//
// The switch: the neighbour's system name equal to a plan switch's
// name; else its first DNS label, case folded ("LEAF-R0-01.dc1" is
// leaf-r0-01), when exactly one plan switch has that short name; else
// its chassis ID read as a GUID (0x0c42..., 0c:42:... alike) equal to a
// plan switch's GUID. A neighbour that matches none is unknown-switch,
// reported with its raw system name, port ID, description and chassis.
//
// The port: the port ID, unless its type is mac or network-address or
// it holds no digits, in which case the port description. Digits are
// folded into a shape ("Eth1/33" is Eth#/#) and, by default, the last
// number is the port (swp33, Ethernet33, Eth1/33 and 33 are all 33),
// except that a breakout's subport is skipped (swp7s2 is 7,
// ethernet1/1/33:1 is 33). Where a switch's numbers are not its
// front-panel ports the rule is learned per shape from the ports whose
// switch the plan confirms: which number, divided by 1, 2, 4 or 8 (lane
// numbering: SONiC's Ethernet0, Ethernet4 for ports 1, 2), plus 0 or 1
// (numbering from 0), agrees with the planned port. A learned rule
// replaces the default only when it agrees with at least 4 ports, with
// more than half of its shape's and with twice as many as the default,
// so a few miscabled ports cannot teach one. Report.PortRules records
// every shape's rule. A port with no number leaves the switch
// confirmed and the port not (SWITCH:?).
//
// # Verdicts
//
// A far end on the planned switch and port (or switch, port unknown)
// is ok; the planned switch elsewhere is wrong-port. Another switch is
// swapped when it is the planned far end of another HCA of the same
// node (or uplink of the same switch) whose own far end is this one's
// planned one; else wrong-rail when the switch serves another rail's
// plane; else wrong-leaf for an HCA, wrong-switch for a cable between
// switches. Nothing seen is missing when the HCA's link is down, its
// node reports no HCA on that rail, or a switch of the cable reported
// its table without it; else no-evidence.
package cabling
