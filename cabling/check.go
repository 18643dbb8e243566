package cabling

import (
	"github.com/rdmamesh/rdmamesh/topology"
)

// swPort is a switch port of the plan; port 0 is a port not known (a
// traced path names switches only), sw -1 a switch the plan lacks.
type swPort struct{ sw, port int32 }

// sight is what was seen at the far end of one cable.
type sight struct {
	seen bool
	at   swPort
	text *portText // resolved into at.port once port names are learned
	raw  string    // the neighbour's own words, for a switch the plan lacks
	ev   string
}

// item is one thing the plan says: an HCA's cable (hca >= 0) or a
// cable between switches, seen from its lower-tier end.
type item struct {
	hca      int32
	anchor   swPort // a switch cable's near end
	expected swPort
	found    sight
	path     pathVote
	why      string // the worker's reason nothing was heard
	state    hostState
}

type hostState uint8

const (
	hostUnreported hostState = iota // the node reported nothing for this rail
	hostDown
	hostUp
)

type pathVote struct {
	sw           int32
	agree, other int32
}

type checker struct {
	t       *topology.Topology
	names   *switchNames
	ports   *portReader
	items   []item
	nodes   map[string][]int32 // planned node → its HCAs
	reports map[string]bool    // nodes that reported any port
	owner   map[swPort]int32   // planned far end → item
	anchors map[swPort]int32   // switch cable's near end → item
	bySw    map[int32][]int32  // anchor switch → its cable items
	read    []bool             // switches that reported a table
	entries []entry
	seenAt  map[swPort]int32 // entry by its local port
	heardBy map[swPort]int32 // entry by the port it heard
	extra   []Finding        // seen, not planned
	rep     *Report
}

// entry is one switch-table line, matched.
type entry struct {
	local     swPort
	localText *portText
	rawLocal  string
	nb        sight
	nbName    string
}

// Check compares what is seen with the plan: a finding for every HCA
// port and every cable between switches the plan has, and for whatever
// is seen that it lacks. It reads nothing but its arguments.
func Check(plan *topology.Topology, obs Observed) *Report {
	c := newChecker(plan)
	c.readHosts(obs.Hosts)
	c.readSwitches(obs.Switches)
	c.readPaths(obs.Paths)
	c.learnPorts()
	for i := range c.items {
		c.rep.Ports = append(c.rep.Ports, c.judge(int32(i)))
	}
	c.rep.Ports = append(c.rep.Ports, c.extra...)
	c.leftoverEntries()
	c.rep.PortRules = c.ports.learned
	c.rep.finish()
	return c.rep
}

func newChecker(t *topology.Topology) *checker {
	names, guids := make([]string, len(t.Switches)), make([]string, len(t.Switches))
	for i, s := range t.Switches {
		names[i], guids[i] = s.Name, s.GUID
	}
	c := &checker{t: t, names: newSwitchNames(names, guids), ports: newPortReader(), rep: &Report{Planned: true},
		nodes: map[string][]int32{}, reports: map[string]bool{}, owner: map[swPort]int32{}, anchors: map[swPort]int32{},
		bySw: map[int32][]int32{}, read: make([]bool, len(t.Switches)), seenAt: map[swPort]int32{}, heardBy: map[swPort]int32{}}
	c.items = make([]item, len(t.HCAs), len(t.HCAs)+len(t.Cables)-len(t.HCAs))
	for h := range t.HCAs {
		cab := t.Cables[t.HCACable(h)]
		far := cab.B
		if far.IsHCA() {
			far = cab.A
		}
		it := &c.items[h]
		it.hca, it.anchor = int32(h), swPort{-1, 0}
		it.expected = swPort{int32(far.Switch), int32(far.Port)}
		c.owner[it.expected] = int32(h)
		c.nodes[t.HCAs[h].Node] = append(c.nodes[t.HCAs[h].Node], int32(h))
	}
	for _, cab := range t.Cables {
		if cab.A.IsHCA() || cab.B.IsHCA() {
			continue
		}
		near, far := cab.A, cab.B
		if t.Switches[far.Switch].Tier < t.Switches[near.Switch].Tier {
			near, far = far, near
		}
		i := int32(len(c.items))
		it := item{hca: -1, anchor: swPort{int32(near.Switch), int32(near.Port)}, expected: swPort{int32(far.Switch), int32(far.Port)}}
		c.items = append(c.items, it)
		c.owner[it.expected] = i
		c.anchors[it.anchor] = i
		c.bySw[it.anchor.sw] = append(c.bySw[it.anchor.sw], i)
	}
	return c
}

// heard turns a neighbour into a sight; its port is read after learning.
func (c *checker) heard(n Neighbor, ev string) sight {
	s := sight{seen: true, ev: ev, at: swPort{c.names.find(n.SystemName, n.ChassisID), 0}}
	s.text = c.ports.text(n.PortID, n.PortIDType, n.PortDescription)
	if s.at.sw < 0 {
		s.raw = rawNeighbor(n)
	}
	return s
}

func (c *checker) readHosts(hosts []HostPort) {
	for _, hp := range hosts {
		c.reports[hp.Node] = true
		h, ok := c.t.HCA(hp.Node, hp.Rail)
		if !ok {
			c.unplannedHost(hp)
			continue
		}
		it := &c.items[h]
		if it.state != hostUnreported {
			continue // a port reported twice: the first report stands
		}
		it.state, it.why = hostUp, hp.Why
		if hp.Down {
			it.state = hostDown
		}
		if hp.Neighbor != nil {
			it.found = c.heard(*hp.Neighbor, EvidenceHost)
			if it.found.at.sw == it.expected.sw {
				c.ports.sample(it.found.text, []int{int(it.expected.port)})
			}
		}
	}
}

func (c *checker) unplannedHost(hp HostPort) {
	if hp.Down && hp.Neighbor == nil {
		return // nothing plugged in where nothing is planned
	}
	f := Finding{Verdict: Unexpected, End: hp.Node + "/" + hp.Device, Node: hp.Node, HCA: hp.Device, Rail: hp.Rail, Evidence: EvidenceHost,
		Detail: "the plan has no HCA on rail " + itoa(hp.Rail) + " of " + hp.Node}
	if _, planned := c.nodes[hp.Node]; !planned {
		f.Detail = "the plan has no node " + hp.Node
	}
	if hp.Neighbor != nil {
		s := c.heard(*hp.Neighbor, EvidenceHost)
		s.at.port = int32(c.ports.port(s.text))
		f.Found = c.sightName(s)
	}
	f.Action = "unplug it, or add it to the plan"
	c.extra = append(c.extra, f)
}

// readSwitches reads the switches' tables and samples the ports of
// neighbours the plan joins, to learn how each switch writes its ports.
func (c *checker) readSwitches(sws []SwitchPort) {
	toward := map[[2]int32][]int{}
	for _, it := range c.items[len(c.t.HCAs):] {
		a, b := it.anchor, it.expected
		toward[[2]int32{a.sw, b.sw}] = append(toward[[2]int32{a.sw, b.sw}], int(a.port))
		toward[[2]int32{b.sw, a.sw}] = append(toward[[2]int32{b.sw, a.sw}], int(b.port))
	}
	c.entries = make([]entry, 0, len(sws))
	for _, sp := range sws {
		e := entry{rawLocal: sp.Switch + " port " + sp.Port, nbName: sp.Neighbor.SystemName}
		e.local.sw = c.names.find(sp.Switch, "")
		e.localText = c.ports.text(sp.Port, "", "")
		e.nb = c.heard(sp.Neighbor, EvidenceSwitch)
		if e.local.sw >= 0 {
			c.read[e.local.sw] = true
			if e.nb.at.sw >= 0 {
				c.ports.sample(e.localText, toward[[2]int32{e.local.sw, e.nb.at.sw}])
				c.ports.sample(e.nb.text, toward[[2]int32{e.nb.at.sw, e.local.sw}])
			}
		}
		c.entries = append(c.entries, e)
	}
}

// learnPorts settles the port rules, then reads every port seen.
func (c *checker) learnPorts() {
	c.ports.learn()
	for i := range c.items {
		if f := &c.items[i].found; f.seen && f.text != nil {
			f.at.port = int32(c.ports.port(f.text))
		}
	}
	for i := range c.entries {
		e := &c.entries[i]
		e.local.port = int32(c.ports.port(e.localText))
		e.nb.at.port = int32(c.ports.port(e.nb.text))
		if e.local.sw < 0 {
			continue
		}
		if _, dup := c.seenAt[e.local]; !dup {
			c.seenAt[e.local] = int32(i)
		}
		if e.nb.at.sw >= 0 {
			if _, dup := c.heardBy[e.nb.at]; !dup {
				c.heardBy[e.nb.at] = int32(i)
			}
		}
	}
	// A switch cable's far end is what its near end's table says, or
	// else the port whose table heard the near end.
	for i := len(c.t.HCAs); i < len(c.items); i++ {
		it := &c.items[i]
		if e, ok := c.seenAt[it.anchor]; ok {
			it.found = c.entries[e].nb
		} else if e, ok := c.heardBy[it.anchor]; ok {
			en := c.entries[e]
			it.found = sight{seen: true, at: en.local, ev: EvidenceSwitch}
		}
	}
}
