package topology

import (
	"fmt"
	"strings"
)

// Path walks the tables from HCA src to dst's LID plus flow, the LMC
// offset as in Route (each of a port's 2^LMC LIDs has its own entry, so
// its own path): from src's cable to its leaf, then at each switch out of
// the port its table gives for the LID and over that port's cable in the
// topology, until an HCA. The walk stands for the packets only where
// every switch forwards by its table, so it is unknown, with the reason,
// at a switch of ar, a switch with no table or no usable entry for the
// LID, an entry pointing at the switch itself or at a port with no cable,
// a loop, or an HCA other than dst at the end (the topology's LIDs are
// not the fabric's).
func (l *LFTs) Path(src, dst int, flow uint32, ar Adaptive) IBPath {
	t := l.x.t
	p := IBPath{Src: src, Dst: dst}
	base := t.HCAs[dst].LID
	switch {
	case base == 0:
		return p.unknown("the topology has no LID for %s (read it from ibnetdiscover output)", t.HCAName(dst))
	case uint64(base)+uint64(flow) > 0xBFFF:
		return p.unknown("LID %d + %d is not a unicast LID", base, flow)
	}
	p.DLID = base + uint16(flow)
	link := t.hcaLink(src, true)
	p.Links = []Link{link}
	seen := map[int]bool{}
	for {
		e := t.LinkTo(link)
		if e.IsHCA() && e.HCA != dst {
			return p.unknown("LID %d leads to %s, not %s: the topology's LIDs are not the fabric's (given out anew since it was read?)", p.DLID, t.HCAName(e.HCA), t.HCAName(dst))
		}
		if e.IsHCA() {
			return p
		}
		s := e.Switch
		name := t.Switches[s].Name
		switch {
		case ar.On(s):
			return p.unknown("adaptive routing on %s: the path is chosen per packet", name)
		case seen[s]:
			return p.unknown("LID %d loops: the tables send it back to %s", p.DLID, name)
		}
		seen[s] = true
		port, why := l.outPort(s, p.DLID)
		if why != "" {
			return p.unknown("%s", why)
		}
		c, fromA, ok := l.x.cableAt(ibDev{s, -1}, port)
		if !ok {
			return p.unknown("%s:%d: %s sends LID %d out of port %d, which has no cable in the topology", l.file, l.tables[s].line, name, p.DLID, port)
		}
		link = linkOf(c, fromA)
		p.Links = append(p.Links, link)
	}
}

// outPort is switch s's out port for lid, or why its table cannot say.
func (l *LFTs) outPort(s int, lid uint16) (int, string) {
	name := l.x.t.Switches[s].Name
	tb := l.tables[s]
	if tb == nil {
		return 0, fmt.Sprintf("%s: no table of %s in the dump%s", l.file, name, l.said())
	}
	at := fmt.Sprintf("%s:%d", l.file, tb.line)
	for _, u := range tb.unread {
		if int(lid)/64 == u.block {
			return 0, fmt.Sprintf("%s:%d: dump_fts could not read the block of %s's table holding LID %d; what it printed for it is not the switch's", l.file, u.line, name, lid)
		}
	}
	switch {
	case tb.stale != "":
		return 0, fmt.Sprintf("%s: %s", at, tb.stale)
	case int(lid) < tb.first || int(lid) > tb.last:
		return 0, fmt.Sprintf("%s: LID %d is outside the LIDs 0x%x-0x%x of %s's table", at, lid, tb.first, tb.last, name)
	case tb.cut && int(lid) > tb.lastLID:
		return 0, fmt.Sprintf("%s: %s's table stops before LID %d, with no \"lids dumped\" line: cut short or its read failed%s", at, name, lid, l.said())
	case int(lid) >= len(tb.port) || tb.port[lid] == noPort:
		return 0, fmt.Sprintf("%s: %s has no out port for LID %d: the subnet manager left it unrouted", at, name, lid)
	case tb.port[lid] == 0:
		return 0, fmt.Sprintf("%s: %s's table sends LID %d to the switch itself (port 0), not towards an HCA", at, name, lid)
	}
	return int(tb.port[lid]), ""
}

// said quotes the tools' own errors, which may say why a table is missing.
func (l *LFTs) said() string {
	if len(l.failed) == 0 {
		return ""
	}
	var b []string
	for _, f := range l.failed {
		b = append(b, fmt.Sprintf("line %d: %s", f.line, f.msg))
	}
	return "; the dump says " + strings.Join(b, "; ")
}
