package matrix

import (
	"fmt"
	"math"
)

// Confidence is contrast x support, rounded to two decimals:
//
//   - contrast: how much worse the suspect's cells are than the cells it is
//     compared with (its bad share minus the background's bad share).
//   - support: how many independent witnesses the comparison has. An HCA
//     seen by w peers gets w/(w+1); a group of g nodes gets 1-0.5^(g-1)
//     (two nodes failing together could be two HCAs), times o/(o+1) for
//     the o nodes outside it; a pair is one route measured once or twice
//     and gets 0.5.
//
// A node or a group blamed on several rails combines its rails as
// independent evidence: 1 - Π(1 - c).
func confidence(contrast, support float64) float64 {
	c := max(0, min(1, contrast)) * max(0, min(1, support))
	return math.Round(c*100) / 100
}

func share(bad, total int) float64 {
	if total == 0 {
		return 0
	}
	return float64(bad) / float64(total)
}

func witnesses(w int) float64 { return float64(w) / float64(w+1) }

func combine(cs []float64) float64 {
	miss := 1.0
	for _, c := range cs {
		miss *= 1 - c
	}
	return math.Round((1-miss)*100) / 100
}

// Caps for the cases where the matrix provably cannot decide.
const (
	pairSupport    = 0.5
	twoNodeGroup   = 0.45 // a group of two: a switch or two HCAs?
	ambiguousGroup = 0.5  // two groups, border bad: whose uplinks?
)

func hcaConfidence(f *finding) float64 {
	var own float64
	switch {
	case f.from > 0:
		// A fault from a round on: the cells since, both sides together
		// (a round may have met it as initiator only).
		own = share(f.rowBad+f.colBad, f.rowTested+f.colTested)
	case f.sides == sideOut|sideIn:
		own = min(share(f.rowBad, f.rowTested), share(f.colBad, f.colTested))
	case f.sides == sideOut:
		own = share(f.rowBad, f.rowTested)
	default:
		own = share(f.colBad, f.colTested)
	}
	return confidence(own-share(f.bgBad, f.bgTested), witnesses(max(f.rowTested, f.colTested)))
}

func groupConfidence(f *groupFinding) float64 {
	support := (1 - math.Pow(0.5, float64(f.members-1))) * witnesses(f.outside)
	c := confidence(share(f.crossBad, f.crossTested)-share(f.outerBad, f.outerTested), support)
	if f.members <= 2 {
		c = min(c, twoNodeGroup)
	}
	if f.ambiguous {
		c = min(c, ambiguousGroup)
	}
	return c
}

// groupNote says out loud why a group blame is weak.
func groupNote(f *groupFinding, title string) string {
	switch {
	case f.members <= 2:
		return fmt.Sprintf("only %d nodes share %s: a dead switch cannot be told from %d bad HCAs or nodes; check both",
			f.members, title, f.members)
	case f.ambiguous:
		return fmt.Sprintf("the cells between %s and the one other group fail while both insides are fine: "+
			"the uplinks of either group, or the spine between them, could be at fault", title)
	}
	return ""
}

// weakNote gives every low-confidence suspect that has no specific note
// one built from its evidence, so "low confidence" is never said silently.
func weakNote(s *Suspect) {
	if s.Confidence >= LowConfidence || s.Note != "" {
		return
	}
	s.Note = fmt.Sprintf("weak evidence: %d/%d of its cells are bad while %d/%d of the cells it is compared with are; "+
		"retest before replacing hardware", s.Bad, s.Total, s.BgBad, s.BgTotal)
}
