package matrix

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
)

// Warning is a configuration finding from the nodes' inventories: nothing
// has to fail for it, and nothing is excluded for it, but a job or a
// later sweep will meet it. Each names the odd one out against what most
// nodes of its rail have, and the change that makes it match.
type Warning struct {
	Kind   string `json:"kind"` // mtu-mix | wrong-network | link-unused
	Node   string `json:"node,omitempty"`
	Link   string `json:"link,omitempty"` // link-unused: the link or cable, by its ends' ports
	Device string `json:"device,omitempty"`
	Rail   int    `json:"rail"`
	Reason string `json:"reason"`
	Fix    string `json:"fix,omitempty"`
}

// Warning kinds.
const (
	WarnMTUMix       = "mtu-mix"
	WarnWrongNetwork = "wrong-network"
)

// minWarnNodes: against fewer nodes than this there is no "most nodes".
const minWarnNodes = 3

// warnings looks for the odd ones out on every rail.
func warnings(ns []Node) []Warning {
	rails := 0
	for _, n := range ns {
		rails = max(rails, len(n.Ports))
	}
	var out []Warning
	for r := range rails {
		out = append(out, mtuMix(ns, r)...)
		out = append(out, wrongNetwork(ns, r)...)
	}
	return out
}

// railPort is a node's usable port on a rail.
type railPort struct {
	node string
	i    int // index into Ports
}

func usablePorts(ns []Node, rail int) []railPort {
	var out []railPort
	for _, n := range ns {
		if rail < len(n.Ports) && n.Ports[rail].Usable {
			out = append(out, railPort{n.Name, rail})
		}
	}
	return out
}

// majority is the value most of vals share, and how many do; "" when
// fewer than minWarnNodes share it or it is not more than half.
func majority(vals []string) (string, int) {
	count := map[string]int{}
	for _, v := range vals {
		count[v]++
	}
	best, n := "", 0
	for v, c := range count {
		if c > n || (c == n && v < best) {
			best, n = v, c
		}
	}
	if n < minWarnNodes || 2*n <= len(vals) {
		return "", 0
	}
	return best, n
}

// mtuMix: paths between ports of different active MTUs negotiate the
// smaller one and measure fine, but anything that trusts its own MTU (RDMA
// CM applications, a peer added later) sends frames the other end cannot
// take, and the larger MTU buys nothing. The odd port is the one to
// change, whichever way: raising the majority would also need the switch.
func mtuMix(ns []Node, rail int) []Warning {
	ports := usablePorts(ns, rail)
	byName := nodesByName(ns)
	vals := make([]string, len(ports))
	for i, p := range ports {
		vals[i] = fmt.Sprint(byName[p.node].Ports[p.i].MTU)
	}
	common, n := majority(vals)
	if common == "" {
		return nil
	}
	var out []Warning
	for i, p := range ports {
		if vals[i] == common {
			continue
		}
		port := byName[p.node].Ports[p.i]
		w := Warning{Kind: WarnMTUMix, Node: p.node, Device: port.Device, Rail: rail,
			Reason: fmt.Sprintf("%s/%s runs at active MTU %s while %d of the %d nodes on rail %d run at %s: every path to it negotiates the smaller, "+
				"and traffic that trusts the larger end's MTU will not fit", p.node, port.Device, vals[i], n, len(ports), rail, common)}
		switch {
		case port.LinkLayer == "InfiniBand":
			w.Fix = fmt.Sprintf("set %s's port to the subnet's MTU %s (the SM's partitions.conf mtu=, checked with `ibportstate`)", p.node, common)
		case port.Netdev != "":
			w.Fix = fmt.Sprintf("on %s, set %s's MTU to what the other nodes' RoCE netdevs use (%s) so its RoCE port runs at %s too; "+
				"raise every node and the switch ports together only if the larger MTU is the plan", p.node, port.Netdev, netdevFor(common), common)
		default:
			w.Fix = fmt.Sprintf("on %s, set the RoCE netdev's MTU to the other nodes' so its port runs at %s too", p.node, common)
		}
		out = append(out, w)
	}
	return out
}

// netdevFor is the netdev MTU that gives a RoCE active MTU: the standard
// 1500 and 9000 for 1024 and 4096, the rule otherwise.
func netdevFor(active string) string {
	switch active {
	case "1024":
		return "1500 gives 1024: `ip link set <netdev> mtu 1500`"
	case "4096":
		return "9000 gives 4096: `ip link set <netdev> mtu 9000`"
	}
	return "the largest RoCE MTU under the netdev MTU less 100 bytes of headers is what the port runs at"
}

// wrongNetwork: a soft-RDMA device (rxe, siw) is bound to a netdev by
// hand, and on the wrong one (the management NIC) its GID sits on a
// network its peers are not on: every test fails as if the path were
// broken. Most nodes' rail ports sharing a /24 (IPv4) or /64 (IPv6) and
// one outside it says which.
func wrongNetwork(ns []Node, rail int) []Warning {
	ports := usablePorts(ns, rail)
	byName := nodesByName(ns)
	nets := make([]string, len(ports))
	for i, p := range ports {
		nets[i] = subnet(byName[p.node].Ports[p.i].IP)
	}
	common, n := majority(nets)
	if common == "" {
		return nil
	}
	var out []Warning
	for i, p := range ports {
		if nets[i] == common || nets[i] == "" {
			continue
		}
		port := byName[p.node].Ports[p.i]
		w := Warning{Kind: WarnWrongNetwork, Node: p.node, Device: port.Device, Rail: rail,
			Reason: fmt.Sprintf("%s/%s's GID is on %s (netdev %s, %s) while %d of the %d nodes on rail %d are on %s: its peers cannot route to it",
				p.node, port.Device, nets[i], orWord(port.Netdev, "no netdev"), port.IP, n, len(ports), rail, common)}
		if soft(port.Device) {
			w.Fix = fmt.Sprintf("on %s, bind %s to the netdev on %s: `rdma link delete %s; rdma link add %s type %s netdev <data netdev>` (`ip -br addr` shows which netdev that is)",
				p.node, port.Device, common, port.Device, port.Device, softType(port.Device))
		} else {
			w.Fix = fmt.Sprintf("on %s, give %s (%s's netdev) its address on %s, or pick the GID index of that address (worker.gid_index)",
				p.node, orWord(port.Netdev, "the netdev"), port.Device, common)
		}
		out = append(out, w)
	}
	return out
}

// subnet is the /24 (IPv4) or /64 (IPv6) an address is on; "" when none.
func subnet(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ""
	}
	bits := 64
	if a.Is4() || a.Is4In6() {
		a, bits = a.Unmap(), 24
	}
	p, err := a.Prefix(bits)
	if err != nil {
		return ""
	}
	return p.String()
}

func soft(device string) bool {
	return strings.HasPrefix(device, "rxe") || strings.HasPrefix(device, "siw")
}

func softType(device string) string {
	if strings.HasPrefix(device, "siw") {
		return "siw"
	}
	return "rxe"
}

func nodesByName(ns []Node) map[string]*Node {
	m := make(map[string]*Node, len(ns))
	for i := range ns {
		m[ns[i].Name] = &ns[i]
	}
	return m
}

// warningFor is the warning of kind on node's rail, if any.
func (m *Matrix) warningFor(kind, node string, rail int) *Warning {
	for i := range m.Warnings {
		if w := &m.Warnings[i]; w.Kind == kind && w.Node == node && (w.Rail == rail || rail == AllRails) {
			return w
		}
	}
	return nil
}

// warningLines are the summary's lines, sorted by node and rail.
func (m *Matrix) warningLines() []string {
	ws := append([]Warning(nil), m.Warnings...)
	sort.SliceStable(ws, func(a, b int) bool {
		if ws[a].Node != ws[b].Node {
			return ws[a].Node < ws[b].Node
		}
		return ws[a].Rail < ws[b].Rail
	})
	out := make([]string, len(ws))
	for i, w := range ws {
		if w.Link != "" {
			out[i] = fmt.Sprintf("warning: %s %s: %s; fix: %s", w.Kind, w.Link, w.Reason, w.Fix)
			continue
		}
		out[i] = fmt.Sprintf("warning: %s %s/%s (rail %d): %s; fix: %s", w.Kind, w.Node, w.Device, w.Rail, w.Reason, w.Fix)
	}
	return out
}

// explainNetwork: a failed suspect on a device whose GID is on another
// network than its peers' failed because of it; say so, and give the
// warning's fix instead of the cells' (which can only guess at GID types
// and routes).
func (s *Suspect) explainNetwork(m *Matrix) {
	if s.Verdict != VerdictFailed || (s.Kind != KindHCA && s.Kind != KindNode) {
		return
	}
	w := m.warningFor(WarnWrongNetwork, s.Node, s.Rail)
	if w == nil {
		return
	}
	s.Note = joinNotes(w.Reason, s.Note)
	s.Fix = w.Fix
}
