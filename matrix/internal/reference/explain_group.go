package reference

import (
	"fmt"
	"sort"
)

// Reasons for the suspects wider than one HCA: switch groups, and the note
// when every rail fails alike.

// groupSuspect turns one group's findings (one rail, or every rail when
// collapsed) into a suspect.
func (l *localizer) groupSuspect(parts []*groupFinding, rail int) Suspect {
	f0 := parts[0]
	title := l.groups.title(f0.group)
	s := Suspect{Kind: KindSwitchGroup, Group: title, Rail: rail}
	for n, id := range l.groups.of {
		if id == f0.group {
			s.Members = append(s.Members, l.m.Nodes[n].Name)
		}
	}
	var cells []int
	cs := make([]float64, len(parts))
	inside, border := 0, 0
	for i, f := range parts {
		cells = append(cells, f.cells...)
		s.Total += f.crossTested + f.innerTested
		s.BgBad += f.outerBad
		s.BgTotal += f.outerTested
		inside += f.innerBad
		border += f.crossBad
		cs[i] = groupConfidence(f)
		if note := groupNote(f, title); note != "" {
			s.Note = note
		}
	}
	sort.Ints(cells)
	s.Confidence = combine(cs)
	if s.Note != "" {
		// Several rails repeat the same ambiguity; they do not resolve it.
		s.Confidence = min(s.Confidence, maxConfidence(cs))
	}
	d := l.fill(&s, cells)
	where := fmt.Sprintf("on rail %d", rail)
	if rail == AllRails {
		where = fmt.Sprintf("on all %d rails", len(parts))
	}
	shape := "inside the group too, so the switch itself is the common factor"
	if f0.innerBad == 0 || fine(f0.innerBad, f0.innerTested) {
		shape = "while its nodes talk fine among themselves, so its uplinks are the common factor"
	}
	s.Reason = fmt.Sprintf("the %d nodes of %s fail %s: %d bad cells across its border and %d inside, "+
		"while the cells outside it are %d/%d ok; bad %s%s",
		len(s.Members), title, where, border, inside, s.BgTotal-s.BgBad, s.BgTotal, shape, l.example(d))
	return s
}

func maxConfidence(cs []float64) float64 {
	m := 0.0
	for _, c := range cs {
		m = max(m, c)
	}
	return m
}

// noteWideRails: when every rail is a rail suspect the common factor is
// wider than any rail, and saying so saves an operator a switch hunt.
func (l *localizer) noteWideRails() {
	rails := 0
	for _, s := range l.out {
		if s.Kind == KindRail {
			rails++
		}
	}
	if rails < 2 || rails < l.m.Rails {
		return
	}
	for i := range l.out {
		if l.out[i].Kind == KindRail {
			l.out[i].Note = "every rail fails like this: look wider than one rail (subnet manager, a shared " +
				"control plane, the hosts' configuration, or the sweep itself)"
		}
	}
}
