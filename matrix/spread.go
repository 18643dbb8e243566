package matrix

import (
	"fmt"
	"math"
)

// Spread: a performance verdict says a cell is some margin worse than its
// rail (2.1x the fastest p50, 7% under the best Gb/s). On a rail whose
// healthy cells already differ by that much (Soft-RoCE, emulation, a
// congested fabric), a slow or narrow cell may be noise, and the HCA it
// blames may be healthy; a link that drops writes is evidence whatever
// the noise. So the confidence of a slow-latency or low-bandwidth suspect
// is scaled by min(1, quietCV / cv), where cv is the robust coefficient of
// variation (1.4826 x MAD / median, with robustStats' 1% floor) of its
// rail's p50s (slow-latency) or Gb/s (low-bandwidth); failed suspects keep
// theirs. quietCV is 5%: hardware rails repeat within a few percent
// (perftest runs differ by 1-3%), emulated ones spread 10-50%.
const quietCV = 0.05

// spreadSample keeps every stride-th measured cell's figures of a rail,
// up to about spreadSampleSize of them: the spread of a million cells is
// known well enough from four thousand, at no cost to the analysis.
const spreadSampleSize = 4096

type railSpread struct{ p50, gbps float64 } // robust CVs; 0 = unknown

type spreadSample struct {
	stride    int
	p50, gbps []float64
}

func newSpreadSample(cells int) *spreadSample {
	return &spreadSample{stride: max(1, cells/spreadSampleSize)}
}

// add takes the figures of the o-th cell of the rail, if it is sampled.
func (s *spreadSample) add(o int, f *figs) {
	if o%s.stride != 0 {
		return
	}
	if f.hasP {
		s.p50 = append(s.p50, f.p50)
	}
	if f.hasG {
		s.gbps = append(s.gbps, f.g)
	}
}

// join appends a later stretch's sample (taken with the same stride).
func (s *spreadSample) join(t *spreadSample) {
	s.p50, s.gbps = append(s.p50, t.p50...), append(s.gbps, t.gbps...)
}

func (s *spreadSample) done() railSpread {
	cv := func(xs []float64) float64 {
		r := robustStats(xs)
		if !r.ok || r.med <= 0 {
			return 0
		}
		return r.scale / r.med
	}
	return railSpread{p50: cv(s.p50), gbps: cv(s.gbps)}
}

// noisy lowers a performance suspect's confidence by its rail's spread.
func (l *localizer) noisy(s *Suspect) {
	var metric string
	var pick func(railSpread) float64
	switch s.Verdict {
	case VerdictSlowLatency:
		metric, pick = "p50s", func(r railSpread) float64 { return r.p50 }
	case VerdictLowBandwidth:
		metric, pick = "Gb/s", func(r railSpread) float64 { return r.gbps }
	default:
		return // a hard failure is evidence however noisy the rail
	}
	cv, rail := 0.0, s.Rail
	if s.Rail == AllRails { // a node: its noisiest rail
		for r, sp := range l.a.cv {
			if v := pick(sp); v > cv {
				cv, rail = v, r
			}
		}
	} else if s.Rail >= 0 && s.Rail < len(l.a.cv) {
		cv = pick(l.a.cv[s.Rail])
	}
	if cv <= quietCV {
		return
	}
	f := quietCV / cv
	s.Confidence = math.Round(s.Confidence*f*100) / 100
	s.Spread = math.Round(cv*1000) / 1000
	s.Note = joinNotes(s.Note, fmt.Sprintf("rail %d's healthy %s vary by %s%% cell to cell (robust CV; %s%% is quiet), "+
		"so a %s verdict there may be noise: confidence scaled by %s", rail, metric, sig3(100*cv), sig3(100*quietCV), s.Verdict, sig3(f)))
}
