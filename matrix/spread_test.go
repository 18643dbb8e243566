package matrix

import (
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// noisyRail spreads a rail's healthy figures by about ±frac, as emulated
// RDMA (Soft-RoCE) does.
func (f *fixture) noisyRail(rail int, frac float64) {
	i := 0
	f.onRail(rail, func(c *Cell) {
		x := 1 + frac*(float64(i*37%101)/50-1) // deterministic, spread over ±frac
		i++
		scaleBW(x)(c)
		if c.Latency != nil {
			l := *c.Latency
			l.P50Ns *= x
			c.Latency = &l
		}
	})
}

// loose thresholds let a noisy rail's healthy cells pass (half the best
// Gb/s, no line-rate rule) while a clearly degraded HCA still fails.
func loose() Thresholds {
	th := DefaultThresholds()
	th.BandwidthFraction, th.LineRateFraction = 0.5, 0
	return th
}

// spreadCase breaks node-04 of a 16 x 2 fabric, judged with loose().
type spreadCase struct {
	name             string
	break_           func(f *fixture)
	kind             string
	rail             int
	verdict          Verdict
	minConf, maxConf float64
	spread           bool
}

func spreadCases() []spreadCase {
	return []spreadCase{
		{
			name:   "low bandwidth on a quiet rail: confident",
			break_: func(f *fixture) { f.touching("node-04", 0, scaleBW(0.5)) },
			kind:   KindHCA, rail: 0, verdict: VerdictLowBandwidth, minConf: 0.9, maxConf: 1,
		},
		{
			name: "low bandwidth 3.3x under a rail spread ±15%: beyond the noise, confident",
			break_: func(f *fixture) {
				f.noisyRail(1, 0.15)
				f.touching("node-04", 1, scaleBW(0.3))
			},
			kind: KindHCA, rail: 1, verdict: VerdictLowBandwidth, minConf: 0.9, maxConf: 1, spread: true,
		},
		{
			name: "a port down on the noisy rail keeps its confidence",
			break_: func(f *fixture) {
				f.noisyRail(1, 0.15)
				f.touching("node-04", 1, fail(probe.ClassPortDown, "down", ""))
			},
			kind: KindHCA, rail: 1, verdict: VerdictFailed, minConf: 0.9, maxConf: 1,
		},
	}
}

// hardFailureBesideNoise is a noisy rail with a narrow HCA next to a
// failed HCA and two failed pairs on the quiet rail.
func hardFailureBesideNoise(f *fixture) {
	f.noisyRail(1, 0.15)
	f.touching("node-04", 1, scaleBW(0.3))
	fail(probe.ClassRetryExceeded, "retry exceeded", "")(f.cell("node-09", "node-10", 0))
	fail(probe.ClassRetryExceeded, "retry exceeded", "")(f.cell("node-09", "node-11", 0))
	f.touching("node-12", 0, fail(probe.ClassRetryExceeded, "retry exceeded", ""))
}

// TestSpreadJudgesAgainstTheNoise: a performance suspect on a noisy rail
// is one beyond that rail's noise, and says how noisy the rail is; on a
// quiet rail, or for a hard failure, nothing is added; the failure ranks
// first.
func TestSpreadJudgesAgainstTheNoise(t *testing.T) {
	for _, c := range spreadCases() {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(16, 2)
			c.break_(f)
			m := Build(f.nodes, f.cells, loose())
			var s *Suspect
			for i := range m.Suspects {
				if x := &m.Suspects[i]; x.Kind == c.kind && x.Node == "node-04" && x.Rail == c.rail {
					s = x
				}
			}
			if s == nil {
				t.Fatalf("no %s suspect node-04 rail %d:\n%s", c.kind, c.rail, m.Summary())
			}
			if s.Verdict != c.verdict || s.Confidence < c.minConf || s.Confidence > c.maxConf || (s.Spread > 0) != c.spread {
				t.Fatalf("suspect %+v: want %s, confidence %v..%v, spread %v", s, c.verdict, c.minConf, c.maxConf, c.spread)
			}
			if c.spread && (s.Spread <= DefaultThresholds().QuietSpread || !strings.Contains(s.Note, "vary by") || !strings.Contains(s.Note, "judged against that noise")) {
				t.Fatalf("spread %v, note %q", s.Spread, s.Note)
			}
			checkSuspectInvariants(t, m)
		})
	}
	t.Run("the hard failure ranks before the noisy slow HCA", func(t *testing.T) {
		f := newFixture(16, 2)
		hardFailureBesideNoise(f)
		m := Build(f.nodes, f.cells, loose())
		if s := m.Suspects[0]; s.Node != "node-12" || s.Verdict != VerdictFailed {
			t.Fatalf("first suspect %s, want node-12's failed HCA:\n%s", s.title(), m.Summary())
		}
	})
}
