// Package topology is a model of a fabric's links: switches, the HCA ports
// and switch ports joined by cables, and the path a test's packets take
// across them. Its core is pure (no I/O): loaders turn a cabling plan,
// a generated fat tree or ibnetdiscover output into a Topology, and
// Route maps a test's ends and flow to directed links. On InfiniBand,
// ParseIBTracert and ParseLFTs read the paths the fabric's own forwarding
// tables give, from ibtracert output and LFT dumps, as IBPaths.
//
// A Topology is built once with New (or a loader) and then only read, so
// it is safe for concurrent use.
package topology

import (
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
)

// LinkLayer decides how a path is chosen where several are equal: RoCE
// switches hash the flow's UDP/IP 5-tuple (ECMP), InfiniBand switches
// forward by destination LID along the subnet manager's tables.
type LinkLayer string

const (
	RoCE       LinkLayer = "roce"
	InfiniBand LinkLayer = "ib"
)

// Tier is a switch's level counted from the hosts: a leaf has HCAs
// cabled to it, a spine only leaves below it, a core only spines.
type Tier uint8

const (
	Leaf  Tier = 1
	Spine Tier = 2
	Core  Tier = 3
)

func (t Tier) String() string {
	switch t {
	case Leaf:
		return "leaf"
	case Spine:
		return "spine"
	case Core:
		return "core"
	}
	return "tier" + strconv.Itoa(int(t))
}

// Switch is one switch. Plane is the rail whose HCAs it serves in a
// rail-optimized fabric (every HCA below it on one rail), -1 when it
// serves several rails; Pod groups the leaves and spines of a 3-tier
// fabric's pod (0 in a 2-tier one).
type Switch struct {
	Name  string `json:"name"`
	Tier  Tier   `json:"tier"`
	Plane int    `json:"plane"`
	Pod   int    `json:"pod"`
	GUID  string `json:"guid,omitempty"`
	LID   uint16 `json:"lid,omitempty"`
	// Addrs are the switch's IP addresses, any of which may answer a
	// traceroute's probe: how a traced hop is matched to the switch.
	Addrs []string `json:"addrs,omitempty"`
}

// HCA is one host port: Node's HCA on Rail. Device is its RDMA device
// name where known (mlx5_3); a plan may name the rail only.
type HCA struct {
	Node   string `json:"node"`
	Device string `json:"device,omitempty"`
	Rail   int    `json:"rail"`
	GUID   string `json:"guid,omitempty"`
	LID    uint16 `json:"lid,omitempty"`
}

// End is one end of a cable: port Port of switch Switch, or HCA HCA's
// port (Switch = -1). Port numbers are the devices' own, from 1.
type End struct {
	Switch int `json:"switch"`
	HCA    int `json:"hca"`
	Port   int `json:"port"`
}

// IsHCA reports whether the end is a host port.
func (e End) IsHCA() bool { return e.Switch < 0 }

// Cable joins two ends. Speed and Width are as a plan or ibnetdiscover
// give them ("400G", "4x NDR"), for the technician's report only.
type Cable struct {
	A     End    `json:"a"`
	B     End    `json:"b"`
	Speed string `json:"speed,omitempty"`
}

// Link is one direction of a cable: cable index x 2, +1 for B → A.
type Link int32

// Cable is the link's cable index, Reverse its other direction.
func (l Link) Cable() int    { return int(l) >> 1 }
func (l Link) Reverse() Link { return l ^ 1 }
func (l Link) Forward() bool { return l&1 == 0 }
func linkOf(cable int, fwd bool) Link {
	if fwd {
		return Link(cable << 1)
	}
	return Link(cable<<1 | 1)
}

// Topology is a fabric. Build one with New; the exported slices must not
// change afterwards.
type Topology struct {
	LinkLayer LinkLayer `json:"link_layer"`
	Switches  []Switch  `json:"switches"`
	HCAs      []HCA     `json:"hcas"`
	Cables    []Cable   `json:"cables"`

	switchByName map[string]int
	hcaByKey     map[hcaKey]int
	hcaCable     []int32  // per HCA: its cable
	leafOf       []int32  // per HCA: the switch its cable reaches, -1 if none
	up           [][]Link // per switch: links to switches of a higher tier, by port
	down         [][]Link // per switch: links to switches of a lower tier, by port
	leaves       []int32  // leaf switches; leafIndex inverts it
	leafIndex    []int32  // per switch: position in leaves, -1 if not a leaf
	dist         []int8   // switches x leaves: hops from a switch down to a leaf, -1 = no way
	maxTier      Tier
	byAddr       map[netip.Addr]int // switch addresses (hops.go)
}

type hcaKey struct {
	node string
	rail int
}

// Errors from New name the cable by its position so a loader can turn it
// into a file line.
var errInvalid = errors.New("invalid topology")

// CableError is a problem with one cable (Index into Cables).
type CableError struct {
	Index int
	Field string
	Msg   string
}

func (e *CableError) Error() string {
	return fmt.Sprintf("cable %d, %s: %s", e.Index+1, e.Field, e.Msg)
}

func (e *CableError) Unwrap() error { return errInvalid }

// New checks the parts and indexes them: every end exists, no port is in
// two cables, no cable joins a device to itself, every HCA has exactly
// one cable. Tiers are derived when a switch's Tier is 0 (leaf: HCAs below
// it; spine: leaves below it; core: the rest); a Plane of a switch left
// at 0 with HCAs of one rail below is set to that rail.
func New(ll LinkLayer, switches []Switch, hcas []HCA, cables []Cable) (*Topology, error) {
	if ll != RoCE && ll != InfiniBand {
		return nil, fmt.Errorf("link layer %q: want %q or %q", ll, RoCE, InfiniBand)
	}
	t := &Topology{LinkLayer: ll, Switches: switches, HCAs: hcas, Cables: cables,
		switchByName: make(map[string]int, len(switches)), hcaByKey: make(map[hcaKey]int, len(hcas))}
	for i, s := range switches {
		if s.Name == "" {
			return nil, fmt.Errorf("switch %d has no name", i+1)
		}
		if _, dup := t.switchByName[s.Name]; dup {
			return nil, fmt.Errorf("switch %q is listed twice", s.Name)
		}
		t.switchByName[s.Name] = i
	}
	if err := t.indexAddrs(); err != nil {
		return nil, err
	}
	for i, h := range hcas {
		k := hcaKey{h.Node, h.Rail}
		if h.Node == "" {
			return nil, fmt.Errorf("HCA %d has no node", i+1)
		}
		if _, dup := t.hcaByKey[k]; dup {
			return nil, fmt.Errorf("node %s rail %d is listed twice", h.Node, h.Rail)
		}
		t.hcaByKey[k] = i
	}
	if err := t.checkCables(); err != nil {
		return nil, err
	}
	t.deriveTiers()
	t.index()
	return t, nil
}

func (t *Topology) checkCables() error {
	type port struct{ sw, hca, num int }
	used := make(map[port]int, 2*len(t.Cables))
	t.hcaCable = make([]int32, len(t.HCAs))
	for i := range t.hcaCable {
		t.hcaCable[i] = -1
	}
	for i, c := range t.Cables {
		for side, e := range []End{c.A, c.B} {
			field := [2]string{"end A", "end B"}[side]
			switch {
			case e.Switch >= len(t.Switches) || e.Switch < -1:
				return &CableError{i, field, fmt.Sprintf("switch index %d out of range", e.Switch)}
			case e.Switch < 0 && (e.HCA < 0 || e.HCA >= len(t.HCAs)):
				return &CableError{i, field, fmt.Sprintf("HCA index %d out of range", e.HCA)}
			case e.Port < 0:
				return &CableError{i, field, fmt.Sprintf("port %d: ports are numbered from 1", e.Port)}
			case e.Switch >= 0 && e.Port == 0:
				return &CableError{i, field, "a switch end needs a port number"}
			}
			p := port{e.Switch, -1, e.Port}
			if e.IsHCA() {
				p = port{-1, e.HCA, 0}
			}
			if j, dup := used[p]; dup {
				return &CableError{i, field, fmt.Sprintf("%s is already in cable %d", t.EndName(e), j+1)}
			}
			used[p] = i
			if e.IsHCA() {
				t.hcaCable[e.HCA] = int32(i)
			}
		}
		if c.A.IsHCA() && c.B.IsHCA() {
			return &CableError{i, "end B", "joins two HCAs; rdmamesh models switched fabrics (put a switch between them)"}
		}
		if !c.A.IsHCA() && c.A.Switch == c.B.Switch {
			return &CableError{i, "end B", fmt.Sprintf("joins switch %s to itself", t.Switches[c.A.Switch].Name)}
		}
	}
	for i, c := range t.hcaCable {
		if c < 0 {
			return fmt.Errorf("HCA %s has no cable", t.HCAName(i))
		}
	}
	return nil
}

// deriveTiers fills a zero Tier by distance from the hosts, and a leaf's
// zero Plane from its HCAs' rail when they share one.
func (t *Topology) deriveTiers() {
	n := len(t.Switches)
	level := make([]int, n)
	planes := make([]map[int]bool, n)
	var queue []int
	for _, c := range t.Cables {
		h, s, ok := c.hostSide()
		if !ok {
			continue
		}
		if level[s] == 0 {
			level[s] = 1
			queue = append(queue, s)
		}
		if planes[s] == nil {
			planes[s] = map[int]bool{}
		}
		planes[s][t.HCAs[h].Rail] = true
	}
	nb := t.switchNeighbours()
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, o := range nb[s] {
			if level[o] == 0 {
				level[o] = level[s] + 1
				queue = append(queue, o)
			}
		}
	}
	for i := range t.Switches {
		s := &t.Switches[i]
		if s.Tier == 0 && level[i] > 0 {
			s.Tier = Tier(min(level[i], 255))
		}
		if s.Tier == Leaf && s.Plane == 0 && len(planes[i]) > 1 {
			s.Plane = -1
		}
		if s.Tier == Leaf && s.Plane == 0 && len(planes[i]) == 1 {
			for r := range planes[i] {
				s.Plane = r
			}
		}
		t.maxTier = max(t.maxTier, s.Tier)
	}
	// A spine or core whose switches below all serve one plane serves it
	// too (ibnetdiscover output and plans name no planes).
	for tier := Spine; tier <= t.maxTier; tier++ {
		for i := range t.Switches {
			s := &t.Switches[i]
			if s.Tier != tier || s.Plane != 0 {
				continue
			}
			plane, first := 0, true
			for _, o := range nb[i] {
				if t.Switches[o].Tier >= tier {
					continue
				}
				if p := t.Switches[o].Plane; first {
					plane, first = p, false
				} else if p != plane {
					plane = -1
				}
			}
			s.Plane = plane
		}
	}
}

func (c Cable) hostSide() (hca, sw int, ok bool) {
	switch {
	case c.A.IsHCA() && !c.B.IsHCA():
		return c.A.HCA, c.B.Switch, true
	case c.B.IsHCA() && !c.A.IsHCA():
		return c.B.HCA, c.A.Switch, true
	}
	return 0, 0, false
}

func (t *Topology) switchNeighbours() [][]int {
	nb := make([][]int, len(t.Switches))
	for _, c := range t.Cables {
		if c.A.IsHCA() || c.B.IsHCA() {
			continue
		}
		nb[c.A.Switch] = append(nb[c.A.Switch], c.B.Switch)
		nb[c.B.Switch] = append(nb[c.B.Switch], c.A.Switch)
	}
	return nb
}

// index builds what routing reads: each HCA's leaf, each switch's up and
// down links in port order, and every switch's distance to every leaf.
func (t *Topology) index() {
	ns := len(t.Switches)
	t.leafOf = make([]int32, len(t.HCAs))
	for i := range t.leafOf {
		c := t.Cables[t.hcaCable[i]]
		_, s, _ := c.hostSide()
		t.leafOf[i] = int32(s)
	}
	t.up, t.down = make([][]Link, ns), make([][]Link, ns)
	type item struct {
		l    Link
		port int
	}
	ups, downs := make([][]item, ns), make([][]item, ns)
	for i, c := range t.Cables {
		if c.A.IsHCA() || c.B.IsHCA() {
			continue
		}
		a, b := c.A.Switch, c.B.Switch
		ta, tb := t.Switches[a].Tier, t.Switches[b].Tier
		switch {
		case ta < tb:
			ups[a] = append(ups[a], item{linkOf(i, true), c.A.Port})
			downs[b] = append(downs[b], item{linkOf(i, false), c.B.Port})
		case ta > tb:
			downs[a] = append(downs[a], item{linkOf(i, true), c.A.Port})
			ups[b] = append(ups[b], item{linkOf(i, false), c.B.Port})
		}
		// Links within a tier carry no up/down route and stay unused.
	}
	for s := range ns {
		for _, pair := range []struct {
			in  []item
			out *[]Link
		}{{ups[s], &t.up[s]}, {downs[s], &t.down[s]}} {
			sort.Slice(pair.in, func(i, j int) bool { return pair.in[i].port < pair.in[j].port })
			for _, it := range pair.in {
				*pair.out = append(*pair.out, it.l)
			}
		}
	}
	t.leafIndex = make([]int32, ns)
	for s := range ns {
		t.leafIndex[s] = -1
		if t.Switches[s].Tier == Leaf {
			t.leafIndex[s] = int32(len(t.leaves))
			t.leaves = append(t.leaves, int32(s))
		}
	}
	t.computeDist()
}

// computeDist finds, for every leaf, how many down-going hops each switch
// is from it: a switch reaches a leaf by going down only, so a path is up
// to the first switch that reaches the destination, then down.
func (t *Topology) computeDist() {
	ns, nl := len(t.Switches), len(t.leaves)
	t.dist = make([]int8, ns*nl)
	for i := range t.dist {
		t.dist[i] = -1
	}
	order := make([]int, ns) // switches by tier, lowest first
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return t.Switches[order[i]].Tier < t.Switches[order[j]].Tier })
	for li, leaf := range t.leaves {
		t.dist[int(leaf)*nl+li] = 0
		for _, s := range order {
			best := int8(-1)
			for _, l := range t.down[s] {
				d := t.dist[t.linkTo(l)*nl+li]
				if d >= 0 && (best < 0 || d+1 < best) {
					best = d + 1
				}
			}
			if best >= 0 && s != int(leaf) {
				t.dist[s*nl+li] = best
			}
		}
	}
}

// linkTo is the switch a switch-to-switch link arrives at.
func (t *Topology) linkTo(l Link) int {
	c := t.Cables[l.Cable()]
	if l.Forward() {
		return c.B.Switch
	}
	return c.A.Switch
}

// LinkFrom is the end a link leaves from, LinkTo the end it arrives at.
func (t *Topology) LinkFrom(l Link) End {
	c := t.Cables[l.Cable()]
	if l.Forward() {
		return c.A
	}
	return c.B
}

func (t *Topology) LinkTo(l Link) End {
	c := t.Cables[l.Cable()]
	if l.Forward() {
		return c.B
	}
	return c.A
}

// Switch finds a switch by name.
func (t *Topology) Switch(name string) (int, bool) {
	i, ok := t.switchByName[name]
	return i, ok
}

// HCA finds node's HCA on rail.
func (t *Topology) HCA(node string, rail int) (int, bool) {
	i, ok := t.hcaByKey[hcaKey{node, rail}]
	return i, ok
}

// HCACable is the cable of an HCA, LeafOf the switch it is cabled to.
func (t *Topology) HCACable(h int) int { return int(t.hcaCable[h]) }
func (t *Topology) LeafOf(h int) int   { return int(t.leafOf[h]) }

// Leaves is the number of leaf switches; LeafIndex a switch's position
// among them (-1 when it is no leaf), LeafSwitch the switch at a position.
func (t *Topology) Leaves() int          { return len(t.leaves) }
func (t *Topology) LeafIndex(s int) int  { return int(t.leafIndex[s]) }
func (t *Topology) LeafSwitch(i int) int { return int(t.leaves[i]) }

// Reaches reports whether switch s reaches the leaf at position leaf
// going down (a leaf reaches itself).
func (t *Topology) Reaches(s, leaf int) bool { return t.dist[s*len(t.leaves)+leaf] >= 0 }
func (t *Topology) MaxTier() Tier            { return t.maxTier }
func (t *Topology) Uplinks(s int) []Link     { return t.up[s] }

// HCAName is "node/device" or "node rail N" when the device is unknown.
func (t *Topology) HCAName(h int) string {
	x := t.HCAs[h]
	if x.Device != "" {
		return x.Node + "/" + x.Device
	}
	return x.Node + " rail " + strconv.Itoa(x.Rail)
}

// EndName is how a report names a port: "leaf-r0-05:33" or "node-03/mlx5_0".
func (t *Topology) EndName(e End) string {
	if e.IsHCA() {
		return t.HCAName(e.HCA)
	}
	return t.Switches[e.Switch].Name + ":" + strconv.Itoa(e.Port)
}

// CableName is "A <-> B", LinkName "A -> B".
func (t *Topology) CableName(c int) string {
	return t.EndName(t.Cables[c].A) + " <-> " + t.EndName(t.Cables[c].B)
}

func (t *Topology) LinkName(l Link) string {
	return t.EndName(t.LinkFrom(l)) + " -> " + t.EndName(t.LinkTo(l))
}
