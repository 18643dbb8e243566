package topology

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ParseIBNetDiscover reads the topology file that ibnetdiscover (from
// infiniband-diags) prints: one block per node, switches then CAs, each a
// few id lines (vendid=, devid=, sysimgguid=, switchguid= or caguid=), a
// node line such as
//
//	Switch	40 "S-0c42a10300aa0001"		# "leaf-r0-00" enhanced port 0 lid 1 lmc 0
//	Ca	1 "H-0c42a10300bb0100"		# "node-01 mlx5_0"
//
// and a line per cabled port naming the peer node and port:
//
//	[1]	"H-0c42a10300bb0100"[1](c42a10300bb0100) 		# "node-01 mlx5_0" lid 9 4xHDR
//	[1](c42a10300bb0100) 	"S-0c42a10300aa0001"[1]		# lid 9 lmc 0 "leaf-r0-00" lid 1 4xHDR
//
// Output of -g (chassis grouping, [ext N] ports) and -f (s= w= v= after
// the speed) reads the same. name is only for error messages; every error
// is a *FileError with the file's line.
//
// Names come from the NodeDescriptions. A switch is named by its own: a
// managed NVIDIA switch's "MF0;NAME:MODEL/U1" gives NAME, a description
// that several switches share (unmanaged switches all say the same) or
// none gives the node's ibnetdiscover id "S-<guid>", so that names stay
// unique. A CA's must be "HOST DEVICE", as rdma-ndd sets it by default;
// its rail is DEVICE's trailing number. GUIDs are node GUIDs written
// 0x%016x; LIDs are a switch's port 0 LID and a CA port's base LID.
//
// Every cable is listed from both ends; it is added once, and the two
// ends must agree, since a disagreement means the fabric changed while
// ibnetdiscover ran or the file was edited. A CA with more than one
// cabled port is refused: the model has one port per device.
func ParseIBNetDiscover(name string, data []byte) (*Topology, error) {
	r := &ibReader{file: name, byGUID: map[uint64]*ibNode{}, header: map[string]uint64{}}
	if err := r.parse(string(data)); err != nil {
		return nil, err
	}
	return r.build()
}

type ibNode struct {
	sw     bool
	guid   uint64
	nports int
	desc   string
	label  string // how errors name it before names are settled
	lid    uint16
	line   int
	ports  map[int]*ibPort
	order  []*ibPort
	index  int // into Switches or HCAs
}

type ibPort struct {
	node     *ibNode
	num      int
	line     int
	peerType byte // S, H or R, as the line calls the peer
	peer     uint64
	peerPort int
	lid      uint16 // a CA port's own LID
	speed    string
}

func (p *ibPort) field() string { return fmt.Sprintf("%s port %d", p.node.label, p.num) }

type ibReader struct {
	file   string
	nodes  []*ibNode
	byGUID map[uint64]*ibNode
	cur    *ibNode
	header map[string]uint64 // id lines of the block being read
	hdrAt  int               // line of its first id line

	switches []Switch
	hcas     []HCA
	cables   []Cable
	ends     [][2]*ibPort // per cable: the port lines of ends A and B
}

func (r *ibReader) errf(line int, field, format string, a ...any) error {
	return &FileError{File: r.file, Line: line, Field: field, Msg: fmt.Sprintf(format, a...)}
}

var (
	ibIDLine   = regexp.MustCompile(`^([a-z]+)=0x([0-9a-fA-F]+)(?:\(([0-9a-fA-F]+)\))?\s*(?:#.*)?$`)
	ibNodeLine = regexp.MustCompile(`^(Switch|Ca|Rt)\s+(\d+)\s+"([SHR])-([0-9a-fA-F]+)"\s*(?:#\s*(.*))?$`)
	ibPortLine = regexp.MustCompile(`^\[(\d+)\](?:\[ext \d+\])?\s*(?:\([0-9a-fA-F]+\))?\s*"([SHR])-([0-9a-fA-F]+)"\[(\d+)\](?:\[ext \d+\])?\s*(?:\([0-9a-fA-F]+\))?\s*(?:#\s*(.*))?$`)
	// The NodeDescription is matched greedily up to the last quote before
	// what follows it, as ibnetdiscover does not escape quotes inside it.
	ibSwitchComment = regexp.MustCompile(`^"(.*)"\s+(?:enhanced|base)\s+port\s+0\s+lid\s+(\d+)\s+lmc\s+\d+`)
	ibCAComment     = regexp.MustCompile(`^"(.*)"`)
	ibSwPortComment = regexp.MustCompile(`^".*"\s+lid\s+\d+\s+(\S+)`)
	ibCAPortComment = regexp.MustCompile(`^lid\s+(\d+)\s+lmc\s+\d+\s+".*"\s+lid\s+\d+\s+(\S+)`)
	ibManagedDesc   = regexp.MustCompile(`^MF0;([^:;]+):`)
)

func (r *ibReader) parse(text string) error {
	cutMidLine := text != "" && !strings.HasSuffix(text, "\n")
	lines := strings.Split(text, "\n")
	for i, raw := range lines {
		err := r.line(i+1, strings.TrimSpace(raw), i == len(lines)-1)
		if fe, ok := err.(*FileError); ok && cutMidLine && fe.Line == len(lines) {
			fe.Msg += "; the file ends in the middle of this line: was the output cut short?"
		}
		if err != nil {
			return err
		}
	}
	if len(r.header) > 0 {
		return r.cutShort()
	}
	if len(r.nodes) == 0 {
		return r.errf(0, "", "no Switch or Ca blocks; want the output of ibnetdiscover (without -l, -p, -H or -S)")
	}
	return nil
}

func (r *ibReader) line(n int, s string, last bool) error {
	if s == "" {
		r.cur = nil
		if len(r.header) > 0 && !last {
			return r.cutShort()
		}
		return nil
	}
	if s[0] == '#' || s == "Non-Chassis Nodes" || strings.HasPrefix(s, "Chassis ") || strings.HasPrefix(s, "Hostname: ") {
		return nil // banner, comments and -g's chassis headings carry no links
	}
	if m := ibIDLine.FindStringSubmatch(s); m != nil {
		return r.idLine(n, m)
	}
	if m := ibNodeLine.FindStringSubmatch(s); m != nil {
		return r.nodeLine(n, m)
	}
	if m := ibPortLine.FindStringSubmatch(s); m != nil {
		return r.portLine(n, m)
	}
	return r.errf(n, "", "%q is not a line of ibnetdiscover's topology output (want key=0x..., a Switch or Ca line, or [PORT] \"S-GUID\"[PORT] ...)", s)
}

func (r *ibReader) cutShort() error {
	return r.errf(r.hdrAt, "block", "the block starting here has no Switch or Ca line: was the output cut short?")
}

func (r *ibReader) idLine(n int, m []string) error {
	r.cur = nil
	if _, dup := r.header[m[1]]; dup {
		return r.cutShort()
	}
	if len(r.header) == 0 {
		r.hdrAt = n
	}
	v, err := strconv.ParseUint(m[2], 16, 64)
	if err != nil {
		return r.errf(n, m[1], "0x%s is not a 64-bit number", m[2])
	}
	r.header[m[1]] = v
	return nil
}

func (r *ibReader) nodeLine(n int, m []string) error {
	kind, letter, comment := m[1], m[3], m[5]
	field := kind + " line"
	if kind == "Rt" {
		return r.errf(n, field, "a router; rdmamesh models one subnet of switches and CAs (run ibnetdiscover on a subnet without routers)")
	}
	if letter != map[string]string{"Switch": "S", "Ca": "H"}[kind] {
		return r.errf(n, field, "a %s with id %s-...; the id of a Switch starts S-, of a Ca H-", kind, letter)
	}
	guid, err := strconv.ParseUint(m[4], 16, 64)
	if err != nil {
		return r.errf(n, field, "GUID %s is not a 64-bit number", m[4])
	}
	idKey := map[string]string{"Switch": "switchguid", "Ca": "caguid"}[kind]
	if g, ok := r.header[idKey]; ok && g != guid {
		return r.errf(n, field, "GUID %016x, but %s above says %016x; the file was edited or mixed up", guid, idKey, g)
	}
	clear(r.header)
	if prev, dup := r.byGUID[guid]; dup {
		return r.errf(n, field, "node %s-%016x is listed twice (also on line %d); keep one block per node", letter, guid, prev.line)
	}
	nports, _ := strconv.Atoi(m[2])
	node := &ibNode{sw: kind == "Switch", guid: guid, nports: nports, line: n, ports: map[int]*ibPort{}}
	if node.sw {
		c := ibSwitchComment.FindStringSubmatch(comment)
		if c == nil {
			return r.errf(n, field, "comment %q is not \"DESCRIPTION\" enhanced|base port 0 lid N lmc N", comment)
		}
		node.desc = strings.TrimSpace(c[1])
		node.lid, err = parseLID(c[2])
	} else {
		c := ibCAComment.FindStringSubmatch(comment)
		if c == nil {
			return r.errf(n, field, "comment %q has no \"NodeDescription\"", comment)
		}
		node.desc = strings.TrimSpace(c[1])
	}
	if err != nil {
		return r.errf(n, field, "%v", err)
	}
	node.label = node.desc
	if node.label == "" {
		node.label = fmt.Sprintf("%s-%016x", letter, guid)
	}
	r.nodes = append(r.nodes, node)
	r.byGUID[guid] = node
	r.cur = node
	return nil
}

func parseLID(s string) (uint16, error) {
	v, err := strconv.ParseUint(s, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("LID %s is out of range (LIDs are 16 bits)", s)
	}
	return uint16(v), nil
}

func (r *ibReader) portLine(n int, m []string) error {
	if r.cur == nil {
		return r.errf(n, "", "a port line outside a node's block (a Switch or Ca line must come first): was the file cut or edited?")
	}
	num, _ := strconv.Atoi(m[1])
	p := &ibPort{node: r.cur, num: num, line: n, peerType: m[2][0]}
	p.peerPort, _ = strconv.Atoi(m[4])
	var err error
	if p.peer, err = strconv.ParseUint(m[3], 16, 64); err != nil {
		return r.errf(n, p.field(), "GUID %s is not a 64-bit number", m[3])
	}
	if num < 1 || num > r.cur.nports {
		return r.errf(n, p.field(), "no such port: line %d says the node has ports 1 to %d", r.cur.line, r.cur.nports)
	}
	if prev, dup := r.cur.ports[num]; dup {
		return r.errf(n, p.field(), "port %d is listed twice (also on line %d); a port has one cable", num, prev.line)
	}
	if r.cur.sw {
		c := ibSwPortComment.FindStringSubmatch(m[5])
		if c == nil {
			return r.errf(n, p.field(), "comment %q is not \"DESCRIPTION\" lid N WIDTHSPEED", m[5])
		}
		p.speed = c[1]
	} else {
		c := ibCAPortComment.FindStringSubmatch(m[5])
		if c == nil {
			return r.errf(n, p.field(), "comment %q is not lid N lmc N \"DESCRIPTION\" lid N WIDTHSPEED", m[5])
		}
		if p.lid, err = parseLID(c[1]); err != nil {
			return r.errf(n, p.field(), "%v", err)
		}
		p.speed = c[2]
	}
	r.cur.ports[num] = p
	r.cur.order = append(r.cur.order, p)
	return nil
}
