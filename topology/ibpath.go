package topology

import (
	"fmt"
	"strconv"
	"strings"
)

// IBPath is the path one InfiniBand destination takes as the fabric's own
// forwarding tables send it, read from ibtracert output or walked through
// an LFT dump. Route's paths are a model; an IBPath is what the switches
// were found to do, so where they cannot be read nothing is taken from
// the model: Unknown says why instead.
//
// The tools name nodes by GUID, LID and NodeDescription. A node is matched
// to the topology by GUID; where the topology has no GUIDs (a cabling plan,
// a generated tree), by NodeDescription, read as ParseIBNetDiscover names
// devices; and by LID and NodeDescription together where the GUID is not
// the one the topology keeps (ibtracert's hop lines give a switch's port
// GUID, ibnetdiscover's Switch lines its node GUID). Nothing else is
// matched, and a node whose LID is not the topology's makes the path
// unknown: the subnet manager has given out LIDs anew since.
type IBPath struct {
	Src, Dst int    // HCAs; -1 where the input names no HCA of the topology
	DLID     uint16 // destination LID walked; 0 from ibtracert, which does not print it
	Links    []Link // HCA to HCA; nil when Unknown is set
	Unknown  string // why the path cannot be told; "" when Links is the path
}

// Known reports whether Links is the path.
func (p IBPath) Known() bool { return p.Unknown == "" }

func (p IBPath) unknown(format string, a ...any) IBPath {
	p.Links = nil
	p.Unknown = fmt.Sprintf(format, a...)
	return p
}

// Adaptive is the set of switches with adaptive routing on. Such a switch
// picks one of several out ports per packet by load, so neither its table
// nor a trace through it tells the path, and a path crossing it is
// unknown. The zero value has none.
//
// It is given by the operator because the formats cannot show it: ibroute
// and dump_fts print only the linear forwarding table (infiniband-diags'
// ibroute.c and dump_fts.c query LinearForwardingTable and nothing else),
// OpenSM's LFT dump likewise, and ibtracert follows that same table; a
// switch routing adaptively still holds the table the subnet manager
// wrote, so its dump looks like any other.
type Adaptive struct {
	all bool
	on  map[int]bool
}

// On reports whether switch s routes adaptively.
func (a Adaptive) On(s int) bool { return a.all || a.on[s] }

// ParseAdaptive reads the switches with adaptive routing on: names as the
// topology has them or GUIDs (0x...), one per line or separated by commas
// (so a flag's value reads too), or "all"; # starts a comment. name is for
// error messages.
func ParseAdaptive(name string, data []byte, t *Topology) (Adaptive, error) {
	a := Adaptive{on: map[int]bool{}}
	x := newIBIndex(t)
	for n, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		for _, item := range strings.Split(line, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			if item == "all" {
				a.all = true
				continue
			}
			s, ok := t.Switch(item)
			if g, err := parseGUID(item); !ok && err == nil {
				d, found := x.guid[g]
				s, ok = d.sw, found && d.sw >= 0
			}
			if !ok {
				return Adaptive{}, &FileError{File: name, Line: n + 1, Field: "switch",
					Msg: fmt.Sprintf("no switch %q in the topology (give its name as reports show it, or its GUID 0x...)", item)}
			}
			a.on[s] = true
		}
	}
	return a, nil
}

func parseGUID(s string) (uint64, error) {
	h, ok := strings.CutPrefix(strings.ToLower(s), "0x")
	if !ok || h == "" || len(h) > 16 {
		return 0, fmt.Errorf("%q is not a GUID (0x and up to 16 hex digits)", s)
	}
	return strconv.ParseUint(h, 16, 64)
}

// ibDev is a switch (sw >= 0) or an HCA of the topology.
type ibDev struct{ sw, hca int }

var noDev = ibDev{-1, -1}

func (d ibDev) isHCA() bool { return d.sw < 0 && d.hca >= 0 }

type swPort struct{ sw, port int }

// ibIndex finds the topology's devices by what infiniband-diags print of
// them, and a switch port's cable.
type ibIndex struct {
	t      *Topology
	guid   map[uint64]ibDev
	lid    map[uint16]ibDev // LIDs that name one device; rails of a generated tree reuse them
	byName bool             // no GUIDs at all (a plan, a generated tree): descriptions name devices
	cable  map[swPort]int
}

func newIBIndex(t *Topology) *ibIndex {
	x := &ibIndex{t: t, guid: map[uint64]ibDev{}, lid: map[uint16]ibDev{}, cable: map[swPort]int{}}
	twice := map[uint16]bool{}
	add := func(d ibDev, guid string, lid uint16) {
		if g, err := parseGUID(guid); err == nil {
			x.guid[g] = d
		}
		if _, dup := x.lid[lid]; dup || twice[lid] {
			delete(x.lid, lid)
			twice[lid] = true
		} else if lid != 0 {
			x.lid[lid] = d
		}
	}
	for i, s := range t.Switches {
		add(ibDev{i, -1}, s.GUID, s.LID)
	}
	for i, h := range t.HCAs {
		add(ibDev{-1, i}, h.GUID, h.LID)
	}
	x.byName = len(x.guid) == 0
	for c, cb := range t.Cables {
		for _, e := range []End{cb.A, cb.B} {
			if !e.IsHCA() {
				x.cable[swPort{e.Switch, e.Port}] = c
			}
		}
	}
	return x
}

func (x *ibIndex) name(d ibDev) string {
	if d.isHCA() {
		return x.t.HCAName(d.hca)
	}
	return x.t.Switches[d.sw].Name
}

func (x *ibIndex) lidOf(d ibDev) uint16 {
	if d.isHCA() {
		return x.t.HCAs[d.hca].LID
	}
	return x.t.Switches[d.sw].LID
}

// described reports whether a NodeDescription names d as ParseIBNetDiscover
// names devices: a switch by its description (NAME of "MF0;NAME:..."), a
// CA by "HOST DEVICE".
func (x *ibIndex) described(desc string, d ibDev) bool {
	desc = strings.TrimSpace(desc)
	if !d.isHCA() {
		if m := ibManagedDesc.FindStringSubmatch(desc); m != nil {
			desc = m[1]
		}
		return desc == x.t.Switches[d.sw].Name
	}
	h := x.t.HCAs[d.hca]
	w := strings.Fields(desc)
	return len(w) == 2 && w[0] == h.Node && (h.Device == w[1] || h.Device == "" && hasRail(w[1], h.Rail))
}

func hasRail(dev string, rail int) bool {
	r, ok := trailingNumber(dev)
	return ok && r == rail
}

// byDesc finds the device a NodeDescription names.
func (x *ibIndex) byDesc(desc string) (ibDev, bool) {
	for i := range x.t.Switches {
		if d := (ibDev{i, -1}); x.described(desc, d) {
			return d, true
		}
	}
	if w := strings.Fields(desc); len(w) == 2 {
		if r, ok := trailingNumber(w[1]); ok {
			if h, ok := x.t.HCA(w[0], r); ok && x.described(desc, ibDev{-1, h}) {
				return ibDev{-1, h}, true
			}
		}
	}
	return noDev, false
}

// identify finds a node an infiniband-diags tool printed: by GUID; by
// NodeDescription where the topology has no GUIDs; by LID where its LID
// and description agree but the GUID is not the one the topology keeps (a
// switch's port GUID in a hop line, where ibnetdiscover gives the node
// GUID). Anything else is not guessed: why names what did not match. A
// device returned with why set has a LID other than the topology's.
func (x *ibIndex) identify(guid uint64, lid uint16, desc string) (ibDev, string) {
	what := fmt.Sprintf("GUID 0x%016x", guid)
	if lid != 0 {
		what += fmt.Sprintf(", LID %d", lid)
	}
	if desc != "" {
		what += fmt.Sprintf(" (%q)", desc)
	}
	d, ok := x.guid[guid]
	if !ok && x.byName {
		d, ok = x.byDesc(desc)
	}
	if !ok {
		byLID, known := x.lid[lid]
		switch {
		case known && desc != "" && x.described(desc, byLID):
			return byLID, ""
		case known:
			return noDev, fmt.Sprintf("%s: the topology has LID %d for %s (devices replaced, or LIDs given out anew, since it was read?)", what, lid, x.name(byLID))
		}
		return noDev, fmt.Sprintf("%s is not in the topology (a device added or replaced since it was read?)", what)
	}
	if want := x.lidOf(d); want != 0 && lid != 0 && want != lid {
		return d, fmt.Sprintf("%s is %s, which has LID %d in the topology: the subnet manager gave out new LIDs since it was read", what, x.name(d), want)
	}
	return d, ""
}

// cableAt is the cable at a device's port and whether the device is its
// end A. An HCA's port is checked only where both sides number it.
func (x *ibIndex) cableAt(d ibDev, port int) (c int, fromA, ok bool) {
	if !d.isHCA() {
		c, ok = x.cable[swPort{d.sw, port}]
		return c, ok && x.t.Cables[c].A.Switch == d.sw && x.t.Cables[c].A.Port == port, ok
	}
	c = x.t.HCACable(d.hca)
	cb := x.t.Cables[c]
	e := cb.B
	if fromA = cb.A.IsHCA() && cb.A.HCA == d.hca; fromA {
		e = cb.A
	}
	return c, fromA, e.Port == 0 || port == 0 || e.Port == port
}

func (x *ibIndex) portName(d ibDev, port int) string {
	if d.isHCA() {
		return fmt.Sprintf("%s port %d", x.t.HCAName(d.hca), port)
	}
	return x.t.Switches[d.sw].Name + ":" + strconv.Itoa(port)
}

// hop is the link from port out of one device to port in of the next, as
// the topology cables them; why says how the topology disagrees.
func (x *ibIndex) hop(from ibDev, out int, to ibDev, in int) (Link, string) {
	c, fromA, ok := x.cableAt(from, out)
	if !ok {
		return 0, fmt.Sprintf("%s has no cable in the topology", x.portName(from, out))
	}
	l := linkOf(c, fromA)
	if e := x.t.LinkTo(l); !endIs(e, to, in) {
		return 0, fmt.Sprintf("the topology cables %s to %s, not to %s: recabled since it was read?",
			x.portName(from, out), x.t.EndName(e), x.portName(to, in))
	}
	return l, ""
}

// endIs reports whether e is port of d; an HCA's port is checked only
// where both sides number it.
func endIs(e End, d ibDev, port int) bool {
	if d.isHCA() {
		return e.IsHCA() && e.HCA == d.hca && (e.Port == 0 || port == 0 || e.Port == port)
	}
	return !e.IsHCA() && e.Switch == d.sw && e.Port == port
}
