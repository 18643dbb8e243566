package topology

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ParseIBTracert reads the output of one `ibtracert SLID DLID` run
// (infiniband-diags; stdout alone or with stderr) and returns the path it
// traced on t, links matched to t's cables, or the reason the path is
// unknown. The trace is
//
//	From ca {0x0c42a10300bb0100} portnum 1 lid 9-9 "node-01 mlx5_0"
//	[1] -> switch port {0x0c42a10300aa0000}[1] lid 1-1 "leaf-r0-00"
//	[34] -> switch port {0x0c42a10300cc0001}[1] lid 6-6 "spine-r0-01"
//	[2] -> switch port {0x0c42a10300aa0001}[34] lid 2-2 "leaf-r0-01"
//	[2] -> ca port {0x0c42a10300bb0400}[1] lid 15-15 "node-04 mlx5_0"
//	To ca {0x0c42a10300bb0400} portnum 1 lid 15-15 "node-04 mlx5_0"
//
// each hop giving the port the packet leaves by, then the port it enters;
// -n prints only the GUIDs and ports ("From {0x...}[1]", "[1] -> {0x...}[1]").
// Nodes are matched to t as IBPath says; the last hop is matched by the
// To line, which gives the node GUID where the hop gives the port's.
//
// Unknown, with the file's line, when: ibtracert failed (its ibwarn and
// iberror messages are the reason: no route, a bad table entry, a port
// down, an unreachable LID); the output stops before the To line; a node
// or cable is not in t; the trace starts or ends at a switch; it crosses
// a switch of ar. The path ibtracert prints is the one the forwarding
// tables give the destination LID it was asked for; with LMC > 0 the
// port's other LIDs may take other paths. Malformed lines and a second
// trace in the file are errors (*FileError).
func ParseIBTracert(name string, data []byte, t *Topology, ar Adaptive) (IBPath, error) {
	r := &traceReader{file: name}
	if err := r.read(string(data)); err != nil {
		return IBPath{}, err
	}
	return r.path(newIBIndex(t), ar)
}

type traceNode struct {
	line int
	guid uint64
	port int    // From/To: the node's port; a hop: the port it enters
	out  int    // a hop: the port the previous node sends from
	lid  uint16 // base LID; 0 in -n output
	desc string
}

type toolMsg struct {
	line int
	msg  string
}

type traceReader struct {
	file     string
	from, to *traceNode
	hops     []*traceNode
	failed   []toolMsg // ibtracert's own warnings and errors
	cutAt    int       // a last line cut in the middle
}

var (
	trEnd       = regexp.MustCompile(`^(From|To) (ca|switch|router|iwarp rnic|\?\?\?) \{0x([0-9a-fA-F]{1,16})\} portnum (\d+) lid (\d+)-(\d+) "(.*)"$`)
	trHop       = regexp.MustCompile(`^\[(\d+)\] -> (ca|switch|router|iwarp rnic|\?\?\?) port \{0x([0-9a-fA-F]{1,16})\}\[(\d+)\] lid (\d+)-(\d+) "(.*)"$`)
	trEndShort  = regexp.MustCompile(`^(From|To) \{0x([0-9a-fA-F]{1,16})\}\[(\d+)\]$`)
	trHopShort  = regexp.MustCompile(`^\[(\d+)\] -> \{0x([0-9a-fA-F]{1,16})\}\[(\d+)\]$`)
	trVerbose   = regexp.MustCompile(`^\[\d+\] \w+: `)
	trHopPrefix = regexp.MustCompile(`^\[\d+\] -> `)
	// iberror is "PROG: iberror: failed: MSG", with -d "PROG: iberror:
	// [pid N] FUNC: failed: MSG" (ibexit in ibdiag_common.c).
	diagError = regexp.MustCompile(`^[\w.-]+: iberror: (?:\[pid \d+\] \w+: )?failed: (.*)$`)
	// ibwarn and ibpanic are "ibwarn: [PID] FUNC: MSG" (libibmad's mad.h).
	diagWarn = regexp.MustCompile(`^(?:ibwarn|ibpanic): \[\d+\] \w+: (.*)$`)
)

func (r *traceReader) errf(line int, field, format string, a ...any) error {
	return &FileError{File: r.file, Line: line, Field: field, Msg: fmt.Sprintf(format, a...)}
}

func (r *traceReader) read(text string) error {
	lines := strings.Split(text, "\n")
	for i, raw := range lines {
		s := strings.TrimRight(raw, " \t\r")
		err := r.line(i+1, s)
		if err != nil && i == len(lines)-1 && s != "" {
			r.cutAt = i + 1 // the last line, with no newline after it: cut short, not malformed
			return nil
		}
		if err != nil {
			return err
		}
	}
	if r.from == nil && len(r.failed) == 0 && r.cutAt == 0 {
		return r.errf(0, "", "no From line and no ibtracert error; want the output of ibtracert SLID DLID")
	}
	return nil
}

func (r *traceReader) line(n int, s string) error {
	switch {
	case s == "", strings.HasPrefix(s, "ibdebug: "), trVerbose.MatchString(s),
		strings.Contains(s, " lid/guid pairs processed from "):
		return nil // -d and -v chatter, and --ports-file's count
	case strings.HasPrefix(s, "From "), strings.HasPrefix(s, "To "):
		return r.endLine(n, s)
	case trHopPrefix.MatchString(s):
		return r.hopLine(n, s)
	}
	if m := diagWarn.FindStringSubmatch(s); m != nil {
		r.failed = append(r.failed, toolMsg{n, m[1]})
		return nil
	}
	if m := diagError.FindStringSubmatch(s); m != nil {
		r.failed = append(r.failed, toolMsg{n, m[1]})
		return nil
	}
	return r.errf(n, "", "%q is not a line of ibtracert output (want From ..., [PORT] -> ..., To ..., or ibwarn:/iberror: messages)", s)
}

func (r *traceReader) endLine(n int, s string) error {
	node := &traceNode{line: n}
	var kind string
	if m := trEnd.FindStringSubmatch(s); m != nil {
		kind, node.desc = m[1], m[7]
		if err := r.numbers(node, m[3], m[4], m[5], m[6]); err != nil {
			return err
		}
	} else if m := trEndShort.FindStringSubmatch(s); m != nil {
		kind = m[1]
		if err := r.numbers(node, m[2], m[3], "", ""); err != nil {
			return err
		}
	} else {
		kind, _, _ = strings.Cut(s, " ")
		return r.errf(n, kind+" line", "%q is not %s TYPE {0xGUID} portnum N lid A-B \"DESCRIPTION\" (or, from -n, %s {0xGUID}[N])", s, kind, kind)
	}
	switch {
	case kind == "From" && r.from != nil:
		return r.errf(n, "From line", "a second trace (the first starts on line %d); give one ibtracert run per file", r.from.line)
	case kind == "From":
		r.from = node
	case r.from == nil:
		return r.errf(n, "To line", "a To line before any From line: was the file edited?")
	case r.to != nil:
		return r.errf(n, "To line", "a second To line (the first is on line %d)", r.to.line)
	default:
		r.to = node
	}
	return nil
}

func (r *traceReader) hopLine(n int, s string) error {
	node := &traceNode{line: n}
	var out string
	if m := trHop.FindStringSubmatch(s); m != nil {
		out, node.desc = m[1], m[7]
		if err := r.numbers(node, m[3], m[4], m[5], m[6]); err != nil {
			return err
		}
	} else if m := trHopShort.FindStringSubmatch(s); m != nil {
		out = m[1]
		if err := r.numbers(node, m[2], m[3], "", ""); err != nil {
			return err
		}
	} else {
		return r.errf(n, "hop", "%q is not [PORT] -> TYPE port {0xGUID}[PORT] lid A-B \"DESCRIPTION\" (or, from -n, [PORT] -> {0xGUID}[PORT])", s)
	}
	v, err := strconv.ParseUint(out, 10, 8)
	if err != nil {
		return r.errf(n, "out port", "%s: ports are numbered 0 to 255", out)
	}
	node.out = int(v)
	switch {
	case r.from == nil:
		// With -v, ibtracert first prints the way from the local port to
		// the source; the trace proper starts at From.
		return nil
	case r.to != nil:
		return r.errf(n, "hop", "a hop after the To line (line %d): was the file edited?", r.to.line)
	}
	r.hops = append(r.hops, node)
	return nil
}

// numbers parses a node's GUID, port and LID range (lo, hi empty in -n
// output), checking the range is a power of two LIDs from an aligned base
// as LMC makes it.
func (r *traceReader) numbers(node *traceNode, guid, port, lo, hi string) error {
	node.guid, _ = strconv.ParseUint(guid, 16, 64) // the patterns allow 16 hex digits at most
	p, err := strconv.ParseUint(port, 10, 8)
	if err != nil {
		return r.errf(node.line, "port", "%s: ports are numbered 0 to 255", port)
	}
	node.port = int(p)
	if lo == "" {
		return nil
	}
	a, errA := strconv.ParseUint(lo, 10, 16)
	b, errB := strconv.ParseUint(hi, 10, 16)
	switch {
	case errA != nil || errB != nil:
		return r.errf(node.line, "lid", "%s-%s: LIDs are 16 bits", lo, hi)
	case b < a || (b-a+1)&(b-a) != 0 || a&(b-a) != 0 || b-a >= 128:
		return r.errf(node.line, "lid", "%s-%s is not the LIDs of one port (a base LID and 2^LMC - 1 more, LMC 0 to 7)", lo, hi)
	}
	node.lid = uint16(a)
	return nil
}

// path matches the trace to t, stopping at the first thing that makes
// the path unknown.
func (r *traceReader) path(x *ibIndex, ar Adaptive) (IBPath, error) {
	p := IBPath{Src: -1, Dst: -1}
	at := func(line int) string { return fmt.Sprintf("%s:%d", r.file, line) }
	if r.from == nil {
		if len(r.failed) == 0 {
			return p.unknown("%s: the output stops in this line, before any From line: cut short", at(r.cutAt)), nil
		}
		return p.unknown("%s: ibtracert failed: %s", at(r.failed[0].line), r.failures()), nil
	}
	switch {
	case r.to != nil && len(r.hops) == 0 && (r.to.guid != r.from.guid || r.to.port != r.from.port):
		return p, r.errf(r.to.line, "To line", "no hop between From (line %d) and a different To node: was the file edited?", r.from.line)
	case len(r.hops) > 0 && r.from.port != 0 && r.hops[0].out != r.from.port:
		// ibtracert prints a source CA's port as the first hop's out
		// port; a switch's From port is 0, its first hop's any.
		return p, r.errf(r.hops[0].line, "out port", "%d, but the From line says the source's port is %d", r.hops[0].out, r.from.port)
	}
	prev, why := x.identify(r.from.guid, r.from.lid, r.from.desc)
	switch {
	case why != "":
		return p.unknown("%s: the source, %s", at(r.from.line), why), nil
	case !prev.isHCA():
		return p.unknown("%s: the trace starts at switch %s; paths run HCA to HCA (trace from the source HCA's LID)", at(r.from.line), x.name(prev)), nil
	}
	p.Src = prev.hca
	for i, h := range r.hops {
		id := h
		if i == len(r.hops)-1 && r.to != nil {
			id = r.to
		}
		d, why := x.identify(id.guid, id.lid, id.desc)
		if why != "" {
			return p.unknown("%s: hop %d, %s", at(h.line), i+1, why), nil
		}
		l, why := x.hop(prev, h.out, d, h.port)
		if why != "" {
			return p.unknown("%s: hop %d, %s", at(h.line), i+1, why), nil
		}
		p.Links = append(p.Links, l)
		if !d.isHCA() && ar.On(d.sw) {
			return p.unknown("%s: adaptive routing on %s: the path is chosen per packet", at(h.line), x.name(d)), nil
		}
		if d.isHCA() && i < len(r.hops)-1 {
			return p.unknown("%s: hop %d reaches HCA %s before the end of the trace", at(h.line), i+1, x.name(d)), nil
		}
		prev = d
	}
	switch {
	case r.to == nil && len(r.failed) > 0:
		return p.unknown("%s: ibtracert failed after %s: %s", at(r.failed[0].line), x.name(prev), r.failures()), nil
	case r.to == nil:
		last := r.from.line
		if len(r.hops) > 0 {
			last = r.hops[len(r.hops)-1].line
		}
		return p.unknown("%s: the output stops after %s without a To line: cut short", at(max(last, r.cutAt)), x.name(prev)), nil
	case len(r.hops) == 0:
		return p.unknown("%s: the trace starts and ends at %s: no link to cross", at(r.to.line), x.name(prev)), nil
	case !prev.isHCA():
		return p.unknown("%s: the trace ends at switch %s; paths run HCA to HCA (trace to the destination HCA's LID)", at(r.to.line), x.name(prev)), nil
	}
	p.Dst = prev.hca
	return p, nil
}

// failures is what ibtracert said went wrong, its messages in order.
func (r *traceReader) failures() string {
	var b []string
	for _, f := range r.failed {
		b = append(b, f.msg)
	}
	return strings.Join(b, "; ")
}
