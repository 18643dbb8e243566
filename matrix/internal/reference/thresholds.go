package reference

import "math"

// DefaultThresholds are NVIDIA ClusterKit's pair rules (latency above 2.1x
// the population minimum, bandwidth under 93% of the population maximum)
// plus ngc_multinode_perf's line-rate rule (90% of the port rate). The
// robust z-score, absolute limits and baseline stay off: they need figures
// only the operator knows.
func DefaultThresholds() Thresholds {
	return Thresholds{LatencyFactor: 2.1, BandwidthFraction: 0.93, LineRateFraction: 0.9, TailFactor: 5}
}

// Baseline variances used when a Baseline is given without any.
const (
	defaultBaselineLatency   = 0.10 // p50 may grow 10%
	defaultBaselineBandwidth = 0.05 // Gb/s may drop 5%
)

// orDefaults fills unset (or nonsensical) fields, so a zero Thresholds from
// a config file that omitted the section does not mark every cell slow. The
// optional rules are off when zero; a negative or non-finite value is
// treated as zero rather than as a rule that would flag every cell.
func (t Thresholds) orDefaults() Thresholds {
	if t == (Thresholds{}) {
		return DefaultThresholds()
	}
	d := DefaultThresholds()
	if !(t.LatencyFactor >= 1) || math.IsInf(t.LatencyFactor, 0) {
		t.LatencyFactor = d.LatencyFactor
	}
	if !(t.BandwidthFraction > 0 && t.BandwidthFraction <= 1) {
		t.BandwidthFraction = d.BandwidthFraction
	}
	if !(t.LineRateFraction > 0 && t.LineRateFraction <= 1) {
		t.LineRateFraction = 0
	}
	if !(t.TailFactor >= 1) || math.IsInf(t.TailFactor, 0) {
		t.TailFactor = 0
	}
	t.RobustZ = positive(t.RobustZ)
	t.MaxP99Ns = positive(t.MaxP99Ns)
	t.MinGbps = positive(t.MinGbps)
	t.BaselineLatency = positive(t.BaselineLatency)
	if !(t.BaselineBandwidth > 0 && t.BaselineBandwidth < 1) {
		t.BaselineBandwidth = 0
	}
	if t.Baseline != nil {
		if t.BaselineLatency == 0 && t.BaselineBandwidth == 0 {
			t.BaselineLatency, t.BaselineBandwidth = defaultBaselineLatency, defaultBaselineBandwidth
		}
		if t.BaselineName == "" {
			t.BaselineName = t.Baseline.Name
		}
	}
	return t
}

func positive(v float64) float64 {
	if v > 0 && !math.IsInf(v, 0) {
		return v
	}
	return 0
}
