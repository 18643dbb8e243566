package inventory

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Selection is the GID entry a port tests with, and why it was chosen.
type Selection struct {
	Device string `json:"device"`
	Port   int    `json:"port"`
	GID    GID    `json:"gid"`
	// Reason names the entry and why lower indexes were passed over, e.g.
	// "index 3: RoCE v2, IPv4 10.1.0.3 on ens1f0 (up); skipped 0, 2: RoCE v1; 1: link-local".
	Reason string `json:"reason"`
	// Warning is set when the entry works with a known limit (RoCE v1,
	// link-local only, netdev down); WarnFix says how to lift it.
	Warning string `json:"warning,omitempty"`
	WarnFix string `json:"warn_fix,omitempty"`
}

// IP is the address traffic is routed on: the IPv4 of an IPv4-mapped GID,
// or a global IPv6 GID; invalid for InfiniBand and link-local entries.
func (s Selection) IP() netip.Addr {
	a := s.GID.Addr
	if s.GID.Netdev == "" || a.IsLinkLocalUnicast() {
		return netip.Addr{}
	}
	return a.Unmap()
}

// SelectionError says why no entry fits, with the cause and the fix doctor
// prints.
type SelectionError struct {
	Msg, Cause, Fix string
}

func (e *SelectionError) Error() string { return e.Msg }

// Select chooses the GID entry of one port under a policy.
func (h *Host) Select(device string, port int, pol GIDPolicy) (Selection, error) {
	for _, r := range h.rails() {
		if r.dev.Name == device && r.port.Num == port {
			return h.selectPort(r, pol)
		}
	}
	return Selection{}, fmt.Errorf("no port %s/%d", device, port)
}

func (h *Host) selectPort(r portRef, pol GIDPolicy) (Selection, error) {
	if r.port.LinkLayer == LayerIB {
		return selectIB(r, pol)
	}
	views := make([]entryView, len(r.port.GIDs))
	for i, g := range r.port.GIDs {
		views[i] = h.view(g)
	}
	if len(views) == 0 {
		return Selection{}, &SelectionError{
			Msg:   fmt.Sprintf("GID table of %s is empty", r.name()),
			Cause: "a RoCE port gets its GIDs from its netdev; an empty table means the netdev is missing, unbound or has never been up",
			Fix:   "bring the port's netdev up (`ip link set <netdev> up`) and check `rdma link` shows it bound to " + r.dev.Name,
		}
	}
	if pol.Mode == ModeIndex {
		return h.selectIndex(r, views, pol)
	}
	best := -1
	for i, v := range views {
		if v.why != "" {
			continue
		}
		if ok, _ := matches(v, pol); !ok {
			continue
		}
		if best < 0 || slices.Compare(rank(v), rank(views[best])) < 0 {
			best = i
		}
	}
	if best < 0 {
		return Selection{}, noneUsable(r, views, pol)
	}
	chosen := views[best]
	sel := Selection{Device: r.dev.Name, Port: r.port.Num, GID: chosen.g, Reason: describe(chosen)}
	if skipped := skippedBelow(views, chosen, pol); skipped != "" {
		sel.Reason += "; skipped " + skipped
	}
	if pol.Mode != ModeAuto {
		sel.Reason += " (policy " + pol.String() + ")"
	}
	if pol.Mode == ModeAuto {
		sel.Warning, sel.WarnFix = tierWarning(chosen)
		if chosen.ndOK && !chosen.nd.Up() && r.port.State.Code != StateActive {
			// The netdev is down because the link is; port_state says why.
			sel.Warning, sel.WarnFix = "netdev "+chosen.g.Netdev+" is "+chosen.nd.OperState+" with its port", "see port_state"
		}
	}
	return sel, nil
}

func selectIB(r portRef, pol GIDPolicy) (Selection, error) {
	want := 0
	if pol.Mode == ModeIndex {
		want = pol.Index
	}
	for _, g := range r.port.GIDs {
		if g.Index != want {
			continue
		}
		sel := Selection{Device: r.dev.Name, Port: r.port.Num, GID: g}
		sel.Reason = fmt.Sprintf("index %d: InfiniBand, GID %s", g.Index, g.Addr)
		if r.port.LID != 0 {
			sel.Reason += fmt.Sprintf("; routed by LID 0x%x", r.port.LID)
		} else {
			sel.Reason += "; no LID assigned yet"
		}
		switch pol.Mode {
		case ModeIndex:
			sel.Reason += " (policy " + pol.String() + ")"
		case ModeAuto:
		default:
			sel.Reason += " (policy " + pol.String() + " applies to RoCE ports only)"
		}
		return sel, nil
	}
	return Selection{}, &SelectionError{
		Msg:   fmt.Sprintf("GID index %d is empty on %s (used: %s)", want, r.name(), usedIndexes(r.port)),
		Cause: "InfiniBand port GIDs are set by the subnet manager; index 0 is always the port GID",
		Fix:   "use --gid index=0 (or auto) for InfiniBand ports",
	}
}

func (h *Host) selectIndex(r portRef, views []entryView, pol GIDPolicy) (Selection, error) {
	for _, v := range views {
		if v.g.Index != pol.Index {
			continue
		}
		if v.why != "" {
			return Selection{}, &SelectionError{
				Msg:   fmt.Sprintf("GID index %d on %s is not usable here: %s", pol.Index, r.name(), v.why),
				Cause: unusableCause(v.why),
				Fix:   "choose an entry whose netdev and address are in this namespace, or use --gid auto",
			}
		}
		return Selection{Device: r.dev.Name, Port: r.port.Num, GID: v.g,
			Reason: describe(v) + " (policy " + pol.String() + ")"}, nil
	}
	return Selection{}, &SelectionError{
		Msg:   fmt.Sprintf("GID index %d is empty on %s (used: %s)", pol.Index, r.name(), usedIndexes(r.port)),
		Cause: "RTR with an empty source GID index fails with EINVAL",
		Fix:   "pick a used index from the GID table, or use --gid auto",
	}
}

// family orders address kinds by preference: IPv4-mapped GIDs first, as
// perftest and NCCL do, because IPv4 is what RoCE fabrics route in practice.
type family int

const (
	famV4 family = iota
	famV6
	famLinkLocal
)

type entryView struct {
	g    GID
	fam  family
	nd   Netdev
	ndOK bool
	why  string // non-empty: the entry cannot work from this namespace
}

func (h *Host) view(g GID) entryView {
	v := entryView{g: g, fam: famV6}
	switch {
	case g.Addr.Is4In6():
		v.fam = famV4
	case g.Addr.IsLinkLocalUnicast():
		v.fam = famLinkLocal
	}
	if g.Netdev == "" {
		v.why = "no netdev"
		return v
	}
	nd, ok := h.Netdev(g.Netdev)
	if !ok {
		v.why = "netdev " + g.Netdev + " not in this network namespace"
		return v
	}
	v.nd, v.ndOK = nd, true
	// A same-named netdev in another namespace (every pod's macvlan is net1)
	// lists its GIDs here too; only our own addresses are ours.
	switch {
	case v.fam == famLinkLocal:
		if !ownLinkLocal(nd, g.Addr, h.AddrsKnown) {
			v.why = fmt.Sprintf("%s is not %s's link-local address here", g.Addr, g.Netdev)
		}
	case h.AddrsKnown && !nd.has(g.Addr):
		v.why = fmt.Sprintf("%s is not on %s here", g.Addr.Unmap(), g.Netdev)
	}
	return v
}

// ownLinkLocal accepts a link-local GID derived from the netdev's MAC
// (the kernel's default GID) or one of its configured addresses.
func ownLinkLocal(nd Netdev, a netip.Addr, addrsKnown bool) bool {
	if nd.has(a) {
		return true
	}
	mac, err := net.ParseMAC(nd.Address)
	if err != nil || len(mac) != 6 {
		return !addrsKnown
	}
	b := a.As16()
	eui := []byte{mac[0] ^ 0x02, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]}
	return bytes.Equal(b[8:], eui)
}

// rank orders usable entries for auto: RoCE v2 IPv4 on an up netdev, then
// v2 global IPv6 on an up netdev, then any v2, then v1; ties by address
// kind, netdev up, lowest index.
func rank(v entryView) []int {
	v2 := v.g.Type == TypeRoCEv2
	up := v.ndOK && v.nd.Up()
	tier := 4
	switch {
	case v2 && v.fam == famV4 && up:
		tier = 1
	case v2 && v.fam == famV6 && up:
		tier = 2
	case v2:
		tier = 3
	case v.g.Type == "":
		tier = 5
	}
	down := 0
	if !up {
		down = 1
	}
	return []int{tier, int(v.fam), down, v.g.Index}
}

func matches(v entryView, pol GIDPolicy) (bool, string) {
	switch pol.Mode {
	case ModeNetdev:
		if v.g.Netdev != pol.Netdev {
			return false, "not on " + pol.Netdev
		}
	case ModeSubnet:
		if !pol.Subnet.Contains(v.g.Addr.Unmap()) {
			return false, "outside " + pol.Subnet.String()
		}
	case ModeVersion:
		if v.g.Type != pol.Version {
			return false, typeName(v.g.Type)
		}
	}
	return true, ""
}

func describe(v entryView) string {
	s := fmt.Sprintf("index %d: %s, %s", v.g.Index, typeName(v.g.Type), addrText(v.g.Addr))
	if v.g.Netdev != "" {
		s += " on " + v.g.Netdev
		if v.ndOK {
			s += " (" + v.nd.OperState + ")"
		}
	}
	return s
}

func typeName(t string) string {
	if t == "" {
		return "unknown type"
	}
	return t
}

func addrText(a netip.Addr) string {
	switch {
	case a.Is4In6():
		return "IPv4 " + a.Unmap().String()
	case a.IsLinkLocalUnicast():
		return "link-local " + a.String()
	}
	return "IPv6 " + a.String()
}

// skippedBelow explains, grouped, why each entry with a lower index than the
// chosen one was passed over: operators expect the first entries to win.
func skippedBelow(views []entryView, chosen entryView, pol GIDPolicy) string {
	var g grouper
	for _, v := range views {
		if v.g.Index >= chosen.g.Index {
			break
		}
		g.add(skipWhy(v, chosen, pol), v.g.Index)
	}
	return g.String()
}

func skipWhy(v, chosen entryView, pol GIDPolicy) string {
	if v.why != "" {
		return v.why
	}
	if ok, why := matches(v, pol); !ok {
		return why
	}
	switch {
	case v.g.Type != chosen.g.Type:
		return typeName(v.g.Type)
	case v.fam != chosen.fam && v.fam == famLinkLocal:
		return "link-local"
	case v.fam != chosen.fam && v.fam == famV6:
		return "IPv6 (IPv4 preferred)"
	case v.ndOK && !v.nd.Up():
		return "netdev " + v.g.Netdev + " " + v.nd.OperState
	}
	return "lower preference"
}

func tierWarning(v entryView) (warning, fix string) {
	switch rank(v)[0] {
	case 4:
		return "only RoCE v1 entries are usable: v1 is not routable (one L2 domain) and every peer must use v1 too",
			"enable RoCE v2 (ConnectX-4 or later, current firmware) or test all peers with --gid version=v1"
	case 5:
		return "the GID type is unreadable; the peer's type may not match", "check " + sysIB + "/<dev>/ports/<p>/gid_attrs/types"
	case 3:
		if v.ndOK && !v.nd.Up() {
			return "netdev " + v.g.Netdev + " is " + v.nd.OperState, "ip link set dev " + v.g.Netdev + " up, and check the cable"
		}
		if v.fam == famLinkLocal {
			return "no IPv4 or global IPv6 RoCE v2 entry: link-local GIDs reach only the same L2 segment",
				"assign an address: ip addr add <addr>/<len> dev " + v.g.Netdev
		}
	}
	return "", ""
}

func noneUsable(r portRef, views []entryView, pol GIDPolicy) error {
	var g grouper
	notHere := 0
	for _, v := range views {
		why := v.why
		if why == "" {
			_, why = matches(v, pol)
		}
		if strings.Contains(why, "not in this network namespace") || why == "no netdev" {
			notHere++
		}
		g.add(why, v.g.Index)
	}
	e := &SelectionError{Msg: fmt.Sprintf("no usable GID on %s (policy %s): %s", r.name(), pol, g.String())}
	switch {
	case notHere == len(views):
		e.Cause = "this network namespace sees the HCA but not the netdev its GIDs belong to (a container without the RoCE netdev); RTR fails with ENODEV \"No such device\""
		e.Fix = "give the pod a netdev on this port: a Multus macvlan/ipvlan on " + orDefault(r.port.primaryNetdev(), "the HCA's netdev") +
			" (rdma netns shared) or an SR-IOV VF (exclusive); or run on the host network"
	case pol.Mode != ModeAuto:
		e.Cause = "no entry of this port matches the policy"
		e.Fix = "use --gid auto, or a policy that matches an entry in the GID table above"
	default:
		e.Cause = unusableCause(g.String())
		e.Fix = "give the port's netdev an address in this namespace (ip addr add <addr>/<len> dev " + orDefault(r.port.primaryNetdev(), "<netdev>") + ")"
	}
	return e
}

func unusableCause(why string) string {
	switch {
	case strings.Contains(why, "not in this network namespace"), strings.Contains(why, "no netdev"):
		return "the GID's netdev is not in this network namespace: RTR fails with ENODEV \"No such device\""
	case strings.Contains(why, " here"):
		return "the GID belongs to a same-named netdev in another namespace (e.g. another pod's macvlan): traffic to it never reaches this process"
	}
	return "the entry cannot carry traffic from this namespace"
}

// grouper collects indexes under reasons in first-seen order and prints
// them as "0-1, 4: why; 2: other".
type grouper struct {
	order []string
	idx   map[string][]int
}

func (g *grouper) add(why string, i int) {
	if g.idx == nil {
		g.idx = map[string][]int{}
	}
	if _, ok := g.idx[why]; !ok {
		g.order = append(g.order, why)
	}
	g.idx[why] = append(g.idx[why], i)
}

func (g *grouper) String() string {
	parts := make([]string, 0, len(g.order))
	for _, why := range g.order {
		parts = append(parts, ranges(g.idx[why])+": "+why)
	}
	return strings.Join(parts, "; ")
}

func ranges(xs []int) string {
	var parts []string
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, strconv.Itoa(xs[i])+"-"+strconv.Itoa(xs[j]))
		} else {
			parts = append(parts, strconv.Itoa(xs[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

func usedIndexes(p *Port) string {
	xs := make([]int, 0, len(p.GIDs))
	for _, g := range p.GIDs {
		xs = append(xs, g.Index)
	}
	if len(xs) == 0 {
		return "none"
	}
	return ranges(xs)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
