package matrix

import (
	"fmt"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/hostlist"
)

// summaryMax caps the suspects the text summary lists; past ten, the first
// ones are what an operator fixes first and the rest is in the JSON.
const summaryMax = 10

// Summary is the few lines a terminal, a CI log or a chat message shows.
func (m *Matrix) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rdmamesh matrix: %d nodes, %d rails, %d cells\n", len(m.Nodes), m.Rails, m.NumCells()+len(m.Cross)+m.CellsOmitted)
	fmt.Fprintf(&b, "cells: %d ok, %d failed, %d slow-latency, %d low-bandwidth, %d untested\n",
		m.Counts[VerdictOK], m.Counts[VerdictFailed], m.Counts[VerdictSlowLatency],
		m.Counts[VerdictLowBandwidth], m.Counts[VerdictUntested])
	if crossCells(m) > 0 { // counted, not listed: BadOnly and SummaryOnly leave ok ones out
		fmt.Fprintf(&b, "cross-rail cells: %d ok, %d failed, %d slow-latency, %d low-bandwidth\n",
			m.CrossCounts[VerdictOK], m.CrossCounts[VerdictFailed], m.CrossCounts[VerdictSlowLatency],
			m.CrossCounts[VerdictLowBandwidth])
	}
	if m.Ignored > 0 {
		fmt.Fprintf(&b, "ignored %d input cells naming unknown nodes or rails\n", m.Ignored)
	}
	if rules := m.Thresholds.extraRules(); rules != "" {
		b.WriteString("rules: " + rules + "\n")
	}
	for _, l := range m.noiseLines() {
		b.WriteString(l + "\n")
	}
	b.WriteString(m.verdictLine() + "\n")
	for _, l := range m.warningLines() {
		b.WriteString(l + "\n")
	}
	for i, s := range m.Suspects {
		if i == summaryMax {
			fmt.Fprintf(&b, "... and %d more suspect(s)\n", len(m.Suspects)-summaryMax)
			break
		}
		fmt.Fprintf(&b, "suspect %d: %s: %s in %d/%d cells (confidence %s) — %s",
			i+1, s.title(), s.label(), s.Bad, s.Total, num(s.Confidence), s.Reason)
		if s.Fix != "" {
			b.WriteString("; fix: " + s.Fix)
		}
		b.WriteByte('\n')
		if s.Note != "" {
			b.WriteString("  note: " + s.Note + "\n")
		}
	}
	if ex := m.Excluded(ExcludeOptions{}); len(ex) > 0 {
		expr, err := hostlist.Compress(ex)
		if err != nil {
			expr = strings.Join(ex, ",")
		}
		fmt.Fprintf(&b, "exclude (%d node(s)): %s\n", len(ex), expr)
	}
	return b.String()
}

// extraRules names the rules beyond the population ones, so a reader of a
// CI log knows why a cell the population found fine was flagged.
func (t Thresholds) extraRules() string {
	var r []string
	if t.LineRateFraction > 0 && t.LineRateFraction != DefaultThresholds().LineRateFraction {
		r = append(r, fmt.Sprintf("line rate %s%%", sig3(100*t.LineRateFraction)))
	}
	if t.TailFactor != DefaultThresholds().TailFactor {
		if t.TailFactor > 0 {
			r = append(r, fmt.Sprintf("p99 tail %sx the rail median", num(t.TailFactor)))
		} else {
			r = append(r, "tail rule off")
		}
	}
	if t.RobustZ > 0 {
		r = append(r, "robust z "+num(t.RobustZ))
	}
	if t.MaxP99Ns > 0 {
		r = append(r, "p99 <= "+formatNs(t.MaxP99Ns))
	}
	if t.MinGbps > 0 {
		r = append(r, "bandwidth >= "+num(t.MinGbps)+" Gb/s")
	}
	if t.BaselineLatency > 0 || t.BaselineBandwidth > 0 {
		r = append(r, fmt.Sprintf("baseline %s (p50 +%s%%, bandwidth -%s%%)", quoteName(t.BaselineName),
			sig3(100*t.BaselineLatency), sig3(100*t.BaselineBandwidth)))
	}
	return strings.Join(r, ", ")
}

// title names the suspect the way an operator would look for it.
func (s Suspect) title() string {
	switch s.Kind {
	case KindRail:
		return fmt.Sprintf("rail %d", s.Rail)
	case KindSwitchGroup:
		if s.Rail == AllRails {
			return "switch-group " + s.Group
		}
		return fmt.Sprintf("switch-group %s (rail %d)", s.Group, s.Rail)
	case KindNode:
		return "node " + s.Node
	case KindPair:
		arrow := "->"
		if s.Bad > 1 { // a pair suspect holds at most its two directions
			arrow = "<->"
		}
		return fmt.Sprintf("pair %s %s %s (rail %d)", s.Node, arrow, s.Peer, s.Rail)
	}
	name := s.Node
	if s.Device != "" {
		name += "/" + s.Device
	}
	return fmt.Sprintf("%s %s (rail %d)", s.Kind, name, s.Rail)
}

// label is the dominant failure class, or the verdict for cells that
// measured but were slow or narrow.
func (s Suspect) label() string {
	if s.Class != "" {
		return string(s.Class)
	}
	if s.Verdict != "" {
		return string(s.Verdict)
	}
	return "bad"
}

// crossCells is how many cross-rail cells the sweep judged, listed in
// Cross or not.
func crossCells(m *Matrix) int {
	n := 0
	for _, c := range m.CrossCounts {
		n += c
	}
	return max(n, len(m.Cross))
}
