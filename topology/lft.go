package topology

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// LFTs are switches' linear forwarding tables (destination LID → out
// port) read from a dump and matched to a topology's switches; Path walks
// them.
type LFTs struct {
	file   string
	x      *ibIndex
	tables []*lftTable // per switch of the topology; nil where the dump has none
	failed []toolMsg   // the tools' own errors, for the reason a table is missing or cut
}

// lftTable is one switch's table: port[lid] is its out port, noPort where
// the dump lists none.
type lftTable struct {
	line        int // of the header
	first, last int // LIDs the header says the block covers
	port        []uint8
	entries     int
	lastLID     int    // the highest LID listed, first-1 before any
	cut         bool   // the block ends without its "lids dumped" line
	stale       string // why the table cannot be trusted at all
	unread      []unreadBlock
}

// unreadBlock is a 64-LID LFT block dump_fts failed to read: it prints
// the block anyway, from whatever its buffer held.
type unreadBlock struct{ block, line int }

// unreadAt is an unread block of the switch with node GUID guid, kept
// until the whole dump is read: the failure, on stderr, may come before
// the block's header, on buffered stdout.
type unreadAt struct {
	guid uint64
	unreadBlock
}

const noPort = 255 // an LFT entry routing nowhere (OpenSM's OSM_NO_PATH)

// ParseLFTs reads the unicast forwarding tables of one or more switches as
// ibroute prints one (infiniband-diags), dump_fts and dump_lfts.sh print
// every switch's (one ibroute-style block each, its switch addressed by
// "DR path slid 0; dlid 0; 0,1,..." rather than "Lid N"; dump_lfts.sh adds
// a warning at the end), or OpenSM writes to opensm-lfts.dump:
//
//	Unicast lids [0x0-0xd] of switch Lid 1 guid 0x0002c90300a10001 (leaf-0):
//	  Lid  Out   Destination
//	       Port     Info
//	0x0001 000 : (Switch portguid 0x0002c90300a10001: 'leaf-0')
//	0x0006 001 : (Channel Adapter portguid 0x0002c90300b10001: 'node-01 mlx5_0')
//	0x0007 001 : (path #2 out of 2: portguid 0x0002c90300b10001)
//	...
//	12 valid lids dumped
//
// Each LID has its own entry, so with LMC > 0 each of a port's LIDs has
// its own path. The destination info is ignored (-n leaves it out; OpenSM
// writes "# ..." instead); -a's invalid entries (255, or marked "illegal
// port") count as no entry. A block's switch is matched to t as IBPath
// says, by the header's GUID, LID and description; blocks of switches t
// does not have are skipped, since no walk over t's cables reaches them.
//
// The tools' failures are kept, not refused: a block cut short (ibroute
// stops at a failed read, leaving out its "lids dumped" line) is read up
// to its last entry; a block dump_fts could not read (its "SubnGet(LFT)
// failed" line names the switch's GUID and block) is not trusted there;
// iberror lines are quoted where a switch has no table. Walks through
// such places are unknown, with these lines as the reason. Errors, as
// *FileError with line and field, are for what no tool prints: an entry
// outside a block or out of order, a count that disagrees, a switch
// twice, multicast tables, a dump of none of t's switches.
func ParseLFTs(name string, data []byte, t *Topology) (*LFTs, error) {
	r := &lftReader{LFTs: &LFTs{file: name, x: newIBIndex(t), tables: make([]*lftTable, len(t.Switches))}}
	if err := r.read(string(data)); err != nil {
		return nil, err
	}
	return r.LFTs, nil
}

type lftReader struct {
	*LFTs
	cur      *lftTable // block being read; a table of no switch of t when skipped
	curOSM   bool      // the block is OpenSM's: its count is the top LID, not the entries
	blocks   int
	firstBad int    // header line of the first block whose switch t lacks
	badWhat  string // and what it named
	unread   []unreadAt
}

var (
	lftHeader = regexp.MustCompile(`^Unicast lids \[(0x[0-9a-fA-F]+|\d+)-(0x[0-9a-fA-F]+|\d+)\] of switch (.*) guid 0x([0-9a-fA-F]{1,16}) \((.*)\):$`)
	lftEntry  = regexp.MustCompile(`^0x([0-9a-fA-F]+) (\d+)(?: (.*))?$`)
	lftCount  = regexp.MustCompile(`^(\d+) (?:valid )?lids dumped$`)
	lftLID    = regexp.MustCompile(`^Lid (\d+)`)
	// ibroute: "SubnGet() failed; MAD status S AM B" ends the table;
	// dump_fts: "SubnGet(LFT) failed on switch 'D' PORTID Node GUID 0xG
	// SMA LID L; MAD status S AM B" and goes on with the next block.
	lftGetFailed   = regexp.MustCompile(`^SubnGet\(\) failed; MAD status 0x[0-9a-fA-F]+ AM 0x[0-9a-fA-F]+$`)
	lftBlockFailed = regexp.MustCompile(`^SubnGet\(LFT\) failed on switch '.*' .* Node GUID 0x([0-9a-fA-F]{1,16}) SMA LID \d+; MAD status 0x[0-9a-fA-F]+ AM 0x([0-9a-fA-F]{1,8})$`)
	lftFailed      = regexp.MustCompile(`^(?:Failed to discover fabric|Failed to open '.*' port '\d+')$`)
)

func (r *lftReader) errf(line int, field, format string, a ...any) error {
	return &FileError{File: r.file, Line: line, Field: field, Msg: fmt.Sprintf(format, a...)}
}

func (r *lftReader) read(text string) error {
	lines := strings.Split(text, "\n")
	for i, raw := range lines {
		s := strings.TrimRight(raw, " \t\r")
		err := r.line(i+1, s)
		if err != nil && i == len(lines)-1 && s != "" {
			break // the last line, with no newline after it: cut short, not malformed
		}
		if err != nil {
			return err
		}
	}
	r.endBlock()
	switch {
	case r.blocks == 0 && len(r.failed) > 0:
		f := r.failed[0]
		return r.errf(f.line, "", "no forwarding table in the dump; the tool said: %s", f.msg)
	case r.blocks == 0:
		return r.errf(0, "", "no \"Unicast lids\" blocks; want the output of ibroute, dump_fts or dump_lfts.sh (without -M)")
	case r.firstBad > 0 && r.matched() == 0:
		return r.errf(r.firstBad, "switch", "%s; none of the %d switches dumped is in the topology: is it the same fabric?", r.badWhat, r.blocks)
	}
	for _, u := range r.unread {
		if d, ok := r.x.guid[u.guid]; ok && !d.isHCA() && r.tables[d.sw] != nil {
			r.tables[d.sw].unread = append(r.tables[d.sw].unread, u.unreadBlock)
		}
	}
	return nil
}

func (r *lftReader) matched() int {
	n := 0
	for _, t := range r.tables {
		if t != nil {
			n++
		}
	}
	return n
}

func (r *lftReader) line(n int, s string) error {
	fields := strings.Join(strings.Fields(s), " ")
	switch {
	case s == "", fields == "Lid Out Destination", fields == "Port Info",
		strings.HasPrefix(s, "ibwarn: "), strings.HasPrefix(s, "ibdebug: "),
		strings.HasPrefix(s, "*** WARNING ***: "):
		return nil // headings, -d chatter, warnings, dump_lfts.sh's note
	case strings.HasPrefix(s, "Unicast lids "):
		return r.header(n, s)
	case strings.HasPrefix(s, "0x"):
		return r.entry(n, s)
	case strings.HasPrefix(s, "Multicast mlids "):
		return r.errf(n, "", "a multicast table; want unicast ones (ibroute or dump_fts without -M)")
	case lftCount.MatchString(s):
		return r.count(n, s)
	case lftGetFailed.MatchString(s), lftFailed.MatchString(s):
		r.failed = append(r.failed, toolMsg{n, s})
		return nil
	}
	if m := lftBlockFailed.FindStringSubmatch(s); m != nil {
		g, _ := strconv.ParseUint(m[1], 16, 64)
		b, _ := strconv.ParseUint(m[2], 16, 32)
		r.unread = append(r.unread, unreadAt{g, unreadBlock{int(b), n}})
		return nil
	}
	if m := diagError.FindStringSubmatch(s); m != nil {
		r.failed = append(r.failed, toolMsg{n, m[1]})
		return nil
	}
	return r.errf(n, "", "%q is not a line of ibroute or dump_fts output (want Unicast lids ..., 0xLID PORT ..., N lids dumped)", s)
}

func (r *lftReader) header(n int, s string) error {
	r.endBlock()
	m := lftHeader.FindStringSubmatch(s)
	if m == nil {
		return r.errf(n, "header", "%q is not Unicast lids [FIRST-LAST] of switch PORTID guid 0xGUID (DESCRIPTION):", s)
	}
	osm := !strings.HasPrefix(m[1], "0x")
	first, err1 := strconv.ParseUint(m[1], 0, 16)
	last, err2 := strconv.ParseUint(m[2], 0, 16)
	if err1 != nil || err2 != nil || first > last || osm != !strings.HasPrefix(m[2], "0x") {
		return r.errf(n, "LID range", "[%s-%s] is not a range of 16-bit LIDs", m[1], m[2])
	}
	guid, _ := strconv.ParseUint(m[4], 16, 64)
	desc := m[5]
	if osm && len(desc) >= 2 && desc[0] == '\'' && desc[len(desc)-1] == '\'' {
		desc = desc[1 : len(desc)-1] // OpenSM quotes the description
	}
	var lid uint16
	if l := lftLID.FindStringSubmatch(m[3]); l != nil {
		v, err := strconv.ParseUint(l[1], 10, 16)
		if err != nil {
			return r.errf(n, "switch", "Lid %s: LIDs are 16 bits", l[1])
		}
		lid = uint16(v)
	}
	r.blocks++
	r.curOSM = osm
	r.cur = &lftTable{line: n, first: int(first), last: int(last), lastLID: int(first) - 1}
	d, why := r.x.identify(guid, lid, desc)
	switch {
	case d == noDev:
		if r.firstBad == 0 {
			r.firstBad, r.badWhat = n, why
		}
		return nil
	case d.isHCA():
		return r.errf(n, "switch", "GUID 0x%016x is HCA %s in the topology; ibroute dumps switches only: is it the same fabric?", guid, r.x.name(d))
	case r.tables[d.sw] != nil:
		return r.errf(n, "switch", "%s is dumped twice (also on line %d); give one table per switch", r.x.name(d), r.tables[d.sw].line)
	}
	r.cur.stale = why
	r.tables[d.sw] = r.cur
	return nil
}

func (r *lftReader) entry(n int, s string) error {
	m := lftEntry.FindStringSubmatch(s)
	switch {
	case m == nil:
		return r.errf(n, "entry", "%q is not 0xLID PORT [DESTINATION]", s)
	case r.cur == nil:
		return r.errf(n, "entry", "an LFT entry outside a switch's block (a Unicast lids line must come first): was the file cut or edited?")
	}
	lid, err := strconv.ParseUint(m[1], 16, 16)
	switch {
	case err != nil || lid > 0xBFFF:
		return r.errf(n, "LID", "0x%s is not a unicast LID (0x0 to 0xbfff)", m[1])
	case int(lid) < r.cur.first || int(lid) > r.cur.last:
		return r.errf(n, "LID", "0x%04x is outside the block's LIDs [0x%x-0x%x] (line %d)", lid, r.cur.first, r.cur.last, r.cur.line)
	case int(lid) <= r.cur.lastLID:
		return r.errf(n, "LID", "0x%04x after 0x%04x: the tools list LIDs in rising order; was the file edited?", lid, r.cur.lastLID)
	}
	port, err := strconv.ParseUint(m[2], 10, 8)
	if err != nil {
		return r.errf(n, "out port", "%s: ports are numbered 0 to 255", m[2])
	}
	info := m[3]
	ibroute := strings.HasPrefix(info, ": (") && strings.HasSuffix(info, ")")
	if info != "" && !ibroute && !strings.HasPrefix(info, "# ") {
		return r.errf(n, "destination", "%q is not \": (...)\" as ibroute writes it, nor \"# ...\" as OpenSM does", info)
	}
	if strings.HasSuffix(info, "illegal port)") {
		port = noPort // -a lists entries beyond the switch's ports; they route nowhere
	}
	t := r.cur
	t.lastLID = int(lid)
	t.entries++
	for len(t.port) <= int(lid) {
		t.port = append(t.port, noPort)
	}
	t.port[lid] = uint8(port)
	return nil
}

func (r *lftReader) count(n int, s string) error {
	if r.cur == nil {
		return r.errf(n, "count", "a \"lids dumped\" line outside a switch's block")
	}
	m := lftCount.FindStringSubmatch(s)
	if c, err := strconv.Atoi(m[1]); !r.curOSM && (err != nil || c != r.cur.entries) {
		return r.errf(n, "count", "%s lids, but the block (line %d) lists %d: was it edited?", m[1], r.cur.line, r.cur.entries)
	}
	r.cur = nil
	return nil
}

// endBlock closes a block that stops without its count.
func (r *lftReader) endBlock() {
	if r.cur != nil {
		r.cur.cut = true
		r.cur = nil
	}
}
