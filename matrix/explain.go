package matrix

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// This file turns localization findings into Suspects an operator can act
// on: what is blamed, on how many cells, the dominant failure and a fix.

// tally is one kind of badness among a suspect's cells: a failure class, or
// a verdict for cells that measured but were slow or narrow.
type tally struct {
	verdict Verdict
	class   probe.Class
	n       int
	first   int // first cell (Matrix.Cells index) with it, for an example
}

func (t tally) label() string {
	if t.verdict == VerdictFailed || (t.verdict == VerdictUntested && t.class != "") {
		return string(t.class)
	}
	return string(t.verdict)
}

var verdictRank = map[Verdict]int{VerdictFailed: 0, VerdictSlowLatency: 1, VerdictLowBandwidth: 2, VerdictUntested: 3}

// tallies counts the cells by label, most frequent first; ties go to the
// more severe verdict so "failed" is never hidden behind "slow".
func tallies(a *analysis, idx []int) []tally {
	var ts []tally
	for _, k := range idx {
		t := tally{verdict: a.verdict(k)}
		// Why a cell was not tested matters as much as why one failed: a
		// worker the control network cannot reach, or the tester's own.
		if t.verdict == VerdictFailed || t.verdict == VerdictUntested {
			t.class = a.class(k)
		}
		found := false
		for i := range ts {
			if ts[i].verdict == t.verdict && ts[i].class == t.class {
				ts[i].n++
				found = true
				break
			}
		}
		if !found {
			t.n, t.first = 1, k
			ts = append(ts, t)
		}
	}
	sort.SliceStable(ts, func(a, b int) bool {
		if ts[a].n != ts[b].n {
			return ts[a].n > ts[b].n
		}
		if verdictRank[ts[a].verdict] != verdictRank[ts[b].verdict] {
			return verdictRank[ts[a].verdict] < verdictRank[ts[b].verdict]
		}
		return ts[a].class < ts[b].class
	})
	return ts
}

func dominant(a *analysis, idx []int) tally {
	if ts := tallies(a, idx); len(ts) > 0 {
		return ts[0]
	}
	return tally{first: -1}
}

// fill sets the fields every suspect kind shares.
func (l *localizer) fill(s *Suspect, idx []int) tally {
	ts := tallies(l.a, idx)
	if len(ts) == 0 {
		return tally{first: -1}
	}
	d := ts[0]
	s.Bad = len(idx)
	s.Verdict = d.verdict
	if d.verdict == VerdictFailed {
		s.Class = d.class
	} else {
		for _, t := range ts[1:] {
			if t.verdict == VerdictFailed {
				s.HardFailures += t.n
			}
		}
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s %d", t.label(), t.n)
	}
	s.Evidence = strings.Join(parts, ", ")
	name := s.Node
	if s.Kind == KindSwitchGroup {
		name = s.Group
	}
	s.Fix = l.fix(s.Kind, name, d, idx)
	return d
}

// fix prefers what the providers said (they saw the verb and errno); the
// hint tables cover measured-but-bad cells and a node whose worker is gone,
// which no single cell can know.
func (l *localizer) fix(kind, node string, d tally, idx []int) string {
	if d.verdict != VerdictFailed || (kind == KindNode && d.class == probe.ClassPeerLost) {
		return suspectFix(kind, node, d.verdict, d.class)
	}
	counts := map[string]int{}
	best := ""
	for _, k := range idx {
		// Verdict and class from the compact cells; only the cells that
		// may carry a fix are read whole.
		if l.a.verdict(k) != VerdictFailed || l.a.class(k) != d.class {
			continue
		}
		c := l.a.result(k)
		if c.Error == nil || c.Error.Fix == "" {
			continue
		}
		f := c.Error.Fix
		counts[f]++
		if counts[f] > counts[best] || (counts[f] == counts[best] && f < best) {
			best = f
		}
	}
	if best == "" {
		best = classFix(d.class)
	}
	if kind == KindRail || kind == KindSwitchGroup {
		return suspectFix(kind, node, d.verdict, d.class) + "; cells report: " + best
	}
	return best
}

// example is a short "SRC -> DST: reason" for the reason line, so the summary
// shows a real figure (a p50, a cause) without opening the evidence.
func (l *localizer) example(d tally) string {
	if d.first < 0 {
		return ""
	}
	c := l.a.result(d.first)
	return fmt.Sprintf("; e.g. %s -> %s: %s", c.Src, c.Dst, c.Reason)
}

// memberNote is independent evidence against a node from membership.
func (l *localizer) memberNote(n int) string {
	switch st := l.m.Nodes[n].State; st {
	case "dead", "suspect", "left":
		return "membership says " + st
	}
	return ""
}

// portNote is independent evidence against an HCA from its inventory.
func (l *localizer) portNote(n, rail int) string {
	ports := l.m.Nodes[n].Ports
	if rail >= len(ports) {
		return ""
	}
	p := ports[rail]
	var notes []string
	if p.State != "" && !strings.Contains(strings.ToUpper(p.State), "ACTIVE") {
		notes = append(notes, "port state "+p.State)
	}
	if p.UnusableWhy != "" {
		notes = append(notes, "inventory: "+p.UnusableWhy)
	}
	return strings.Join(notes, ", ")
}

func (l *localizer) hcaName(n, rail int, cells []int) (name, device string) {
	node := l.m.Nodes[n].Name
	device = portDevice(l.m.Nodes[n], rail)
	for _, k := range cells {
		if device != "" {
			break
		}
		if c := l.a.result(k); c.Src == node {
			device = c.SrcDevice
		} else {
			device = c.DstDevice
		}
	}
	if device == "" {
		return node, ""
	}
	return node + "/" + device, device
}

func (l *localizer) hcaSuspect(f *finding) Suspect {
	name, device := l.hcaName(f.node, f.rail, f.cells)
	s := Suspect{Kind: KindHCA, Node: l.m.Nodes[f.node].Name, Device: device, Rail: f.rail,
		Total: f.rowTested + f.colTested, BgBad: f.bgBad, BgTotal: f.bgTested, Confidence: hcaConfidence(f)}
	d := l.fill(&s, f.cells)
	if max(f.rowTested, f.colTested) <= 1 {
		s.Note = fmt.Sprintf("only 2 nodes on rail %d: the matrix cannot tell which end is broken; %s decided",
			f.rail, orWord(joinNotes(l.portNote(f.node, f.rail), l.memberNote(f.node)), "independent evidence"))
	}
	var what string
	switch {
	case f.downs > 0:
		s.Confidence = max(s.Confidence, flapConfidence)
		how := "down once during the sweep (its port counted its link going down)"
		if f.downs > 1 {
			how = fmt.Sprintf("flapping: its port counted its link going down %d times during the sweep", f.downs)
		}
		what = fmt.Sprintf("%s is %s, and %d/%d of its cells failed", name, how, f.rowBad+f.colBad, f.rowTested+f.colTested)
		if when := l.flapWhen(f.cells); when != "" {
			what += ", in " + when
		}
		s.Fix = "a link that goes down and up under load is failing: reseat or replace the cable and optics, and check the switch port's log for the flaps"
	case f.from > 0:
		what = fmt.Sprintf("%s fails on rail %d from round %d on: %d/%d of its cells since then are bad, with %d peers "+
			"(its %d cells before were ok)", name, f.rail, f.from, f.rowBad+f.colBad, f.rowTested+f.colTested,
			failedPeers(l, f), f.before)
		s.FromRound = f.from
	case f.sides == sideOut|sideIn:
		what = fmt.Sprintf("%s is bad on rail %d as initiator in %d/%d cells and as target in %d/%d",
			name, f.rail, f.rowBad, f.rowTested, f.colBad, f.colTested)
	case f.sides == sideOut:
		what = fmt.Sprintf("%s is bad on rail %d only as initiator: %d/%d cells to healthy peers",
			name, f.rail, f.rowBad, f.rowTested)
		s.Total = f.rowTested
	default:
		what = fmt.Sprintf("%s is bad on rail %d only as target: %d/%d cells from healthy peers",
			name, f.rail, f.colBad, f.colTested)
		s.Total = f.colTested
	}
	if f.bgTested > 0 {
		what += fmt.Sprintf(", while its peers' other rail-%d cells are %d/%d ok",
			f.rail, f.bgTested-f.bgBad, f.bgTested)
	}
	if note := joinNotes(l.portNote(f.node, f.rail), l.memberNote(f.node)); note != "" {
		what += " (" + note + ")"
	}
	s.Reason = what + l.example(d)
	l.withDirection(&s, name, l.direction(f.node, f.rail))
	return s
}

func (l *localizer) nodeSuspect(n int, bad []int, total int, parts []*finding) Suspect {
	name := l.m.Nodes[n].Name
	rails := len(parts)
	s := Suspect{Kind: KindNode, Node: name, Rail: AllRails, Total: total}
	cs := make([]float64, len(parts))
	for i, f := range parts {
		cs[i] = hcaConfidence(f)
		s.BgBad += f.bgBad
		s.BgTotal += f.bgTested
	}
	s.Confidence = combine(cs)
	d := l.fill(&s, bad)
	if d.verdict == VerdictFailed && d.class == probe.ClassPeerLost && l.memberNote(n) != "" {
		s.Confidence = max(s.Confidence, 0.95) // membership saw it die too
	}
	if d.verdict == VerdictFailed && d.class == probe.ClassPeerLost {
		s.Reason = fmt.Sprintf("the rdmamesh worker on %s does not answer: %d/%d of its cells on %d rail(s) are bad, mostly peer-lost",
			name, len(bad), total, rails)
	} else {
		s.Reason = fmt.Sprintf("every HCA of %s is bad: %d/%d of its cells on %d rail(s), so the host is the common factor",
			name, len(bad), total, rails)
	}
	if note := l.memberNote(n); note != "" {
		s.Reason += " (" + note + ")"
	}
	if from := minFrom(parts); from > 0 {
		s.FromRound = from
		s.Reason += fmt.Sprintf(", failing from round %d on (its earlier cells were ok)", from)
	}
	s.Reason += l.example(d)
	l.withDirection(&s, name, l.nodeDirection(parts))
	return s
}

func (l *localizer) railSuspectFor(rail int, cells []int, tested, affected, members int) Suspect {
	s := Suspect{Kind: KindRail, Rail: rail, Total: tested,
		Confidence: confidence(share(len(cells), tested), witnesses(members))}
	for _, r := range l.m.RailRollups {
		if r.Key != railKey(rail) {
			s.BgBad += r.Failed + r.Slow + r.LowBandwidth
			s.BgTotal += r.Cells - r.Untested
		}
	}
	d := l.fill(&s, cells)
	s.Reason = fmt.Sprintf("%d/%d rail-%d cells are bad, touching %d of %d nodes: no single HCA stands out, "+
		"so the rail itself (switch, subnet manager, cabling) is the common factor%s",
		len(cells), tested, rail, affected, members, l.example(d))
	return s
}

func (l *localizer) pairSuspect(src, dst, rail int, cells []int, total int, both bool, rc railCounts, members int) Suspect {
	a, b := l.m.Nodes[src].Name, l.m.Nodes[dst].Name
	s := Suspect{Kind: KindPair, Node: a, Peer: b, Rail: rail, Total: total,
		BgBad: rc.bad - len(cells), BgTotal: rc.tested - total}
	s.Confidence = confidence(share(len(cells), total)-share(s.BgBad, s.BgTotal), pairSupport)
	switch {
	case members == 2:
		s.Note = fmt.Sprintf("only 2 nodes on rail %d: the matrix cannot tell which end (or the path) is broken", rail)
	case s.Confidence < LowConfidence:
		s.Note = "a single pair is weak evidence (it may be transient): retest it before touching the cable"
	}
	d := l.fill(&s, cells)
	if both {
		s.Reason = fmt.Sprintf("both directions between %s and %s are bad on rail %d, while both HCAs are fine with most other peers",
			a, b, rail)
	} else {
		s.Reason = fmt.Sprintf("%s -> %s is bad on rail %d, while the reverse direction is not", a, b, rail)
	}
	if note := joinNotes(l.memberNote(src), l.memberNote(dst)); note != "" {
		s.Reason += " (" + note + ")"
	}
	s.Reason += l.example(d)
	return s
}

func (l *localizer) untestedSuspect(n int, cells []int) Suspect {
	name := l.m.Nodes[n].Name
	// Certain that it was not measured; that says nothing about its HCAs,
	// which is what the reason and the fix say.
	total := 0
	for r := 0; r < l.m.Rails; r++ {
		total += l.tested[n*l.m.Rails+r]
	}
	total += len(cells)
	s := Suspect{Kind: KindNode, Node: name, Rail: AllRails, Total: total, Confidence: 0.9}
	d := l.fill(&s, cells)
	switch {
	case d.class == probe.ClassUnreachable:
		s.Reason = fmt.Sprintf("the rdmamesh worker on %s could not be reached over the control network while gossip saw it alive: "+
			"%d/%d of its cells were not tested (the fabric is not judged there, either way)", name, len(cells), total)
	case len(cells) == total:
		s.Reason = fmt.Sprintf("no cell touching %s was measured (%d/%d untested) while the rest of the fabric was",
			name, len(cells), total)
	default:
		s.Reason = fmt.Sprintf("%d/%d of the cells touching %s were not measured while the rest of the fabric was",
			len(cells), total, name)
	}
	if note := l.memberNote(n); note != "" {
		s.Reason += " (" + note + ")"
	}
	return s
}

func joinNotes(notes ...string) string {
	var keep []string
	for _, n := range notes {
		if n != "" {
			keep = append(keep, n)
		}
	}
	return strings.Join(keep, "; ")
}

func orWord(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
