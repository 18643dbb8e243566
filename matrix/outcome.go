package matrix

import "fmt"

// Outcome is what a sweep found, in the terms a job launcher acts on: a
// fabric fault drains nodes, a performance problem may be tolerated or
// drained, an untested fabric is retried. It is derived from the counts
// and the suspects, so a matrix read back from JSON (the gate's) gives the
// same answer as the one analysed.
type Outcome string

const (
	// OutcomePass: every planned cell was measured and nothing failed;
	// performance outliers too weak to act on may remain (Weak).
	OutcomePass Outcome = "pass"
	// OutcomeFault: cells failed outright (dropped writes, a port or a
	// worker down, a wrong GID): the fabric is broken somewhere.
	OutcomeFault Outcome = "fault"
	// OutcomePerformance: nothing failed, but a confident suspect is
	// slower or narrower than its peers beyond the rail's noise.
	OutcomePerformance Outcome = "performance"
	// OutcomeUntested: nothing measured was bad, but planned cells were
	// not measured (a tester fault, a worker the control network cannot
	// reach): the fabric was not fully judged.
	OutcomeUntested Outcome = "untested"
)

// Outcome judges the matrix: a failed cell first, then a performance
// verdict that stands, then cells left untested.
func (m *Matrix) Outcome() Outcome {
	if m.Counts[VerdictFailed] > 0 || m.CrossCounts[VerdictFailed] > 0 {
		return OutcomeFault
	}
	if m.definitePerformance() {
		return OutcomePerformance
	}
	measured := m.NumCells() + len(m.Cross) + m.CellsOmitted - m.Counts[VerdictUntested]
	if m.untestedPlanned() > 0 || measured <= 0 {
		return OutcomeUntested
	}
	return OutcomePass
}

// definitePerformance: a confident slow or low-bandwidth suspect, or such
// a cell on a rail quiet for that figure (where the fixed rules hold, a
// slow pair is a slow path, not noise), or on the cross rails.
func (m *Matrix) definitePerformance() bool {
	floor := ExcludeOptions{}.floor(m)
	for _, s := range m.Suspects {
		if perfVerdict(s.Verdict) && s.Confidence >= floor {
			return true
		}
	}
	if m.CrossCounts[VerdictSlowLatency]+m.CrossCounts[VerdictLowBandwidth] > 0 {
		return true
	}
	return m.perfCells(false) > 0
}

// perfCells counts the slow and low-bandwidth cells on rails that were
// noisy for that figure (noisy) or quiet (!noisy), from the rail rollups.
func (m *Matrix) perfCells(noisy bool) int {
	n := 0
	for _, r := range m.RailRollups {
		var rail int
		if _, err := fmt.Sscanf(r.Key, "rail-%d", &rail); err != nil {
			continue
		}
		if m.noisyFigure(rail, "p50") == noisy {
			n += r.Slow
		}
		if m.noisyFigure(rail, "gbps") == noisy {
			n += r.LowBandwidth
		}
	}
	return n
}

func (m *Matrix) noisyFigure(rail int, figure string) bool {
	for _, n := range m.Noise {
		if n.Rail == rail && n.Figure == figure {
			return true
		}
	}
	return false
}

// Weak counts the slow or low-bandwidth cells of a passing sweep: on
// noisy rails, and explained by no confident suspect. They are reported,
// not acted on.
func (m *Matrix) Weak() int {
	if m.Outcome() != OutcomePass {
		return 0
	}
	return m.perfCells(true)
}

// untestedPlanned counts the untested cells that were part of the plan:
// with TestedOnly, an untested cell was never planned.
func (m *Matrix) untestedPlanned() int {
	if m.Thresholds.TestedOnly {
		return 0
	}
	return m.Counts[VerdictUntested]
}

func perfVerdict(v Verdict) bool { return v == VerdictSlowLatency || v == VerdictLowBandwidth }

// verdictLine is the summary's verdict, one line.
func (m *Matrix) verdictLine() string {
	switch m.Outcome() {
	case OutcomeFault:
		return fmt.Sprintf("UNHEALTHY: %d suspect(s)", len(m.Suspects))
	case OutcomePerformance:
		return fmt.Sprintf("UNHEALTHY (performance): %d suspect(s), no cell failed", len(m.Suspects))
	case OutcomeUntested:
		switch {
		case m.NumCells()+len(m.Cross)+m.CellsOmitted == 0:
			return "UNTESTED: no cells to test (fewer than two nodes share a rail)"
		case m.untestedPlanned() == 0:
			return "UNTESTED: no cell was measured"
		}
		return fmt.Sprintf("UNTESTED: %d cell(s) not measured; nothing measured was bad", m.untestedPlanned())
	}
	if w := m.Weak(); w > 0 && !m.Healthy {
		return fmt.Sprintf("PASS: %d cell(s) slower or narrower than their rail, too weakly to act on (retest to confirm)", w)
	}
	return "HEALTHY"
}

// noiseLines say which rails were judged against their noise.
func (m *Matrix) noiseLines() []string {
	var out []string
	for _, n := range m.Noise {
		what := map[string]string{"p50": "p50s", "gbps": "Gb/s"}[n.Figure]
		switch n.Judged {
		case "not-judged":
			out = append(out, fmt.Sprintf("noise: rail %d's %s vary %s%% cell to cell (over %s%%): no cell is judged slow or short on its own there; nodes' sides still are",
				n.Rail, what, sig3(100*n.Spread), sig3(100*m.Thresholds.MaxSpread)))
		default:
			out = append(out, fmt.Sprintf("noise: rail %d's %s vary %s%% cell to cell: judged against that noise, not against the best cell",
				n.Rail, what, sig3(100*n.Spread)))
		}
	}
	return out
}
