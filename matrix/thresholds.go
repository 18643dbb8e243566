package matrix

import "math"

// DefaultThresholds are NVIDIA ClusterKit's pair rules (latency above 2.1x
// the population minimum, bandwidth under 93% of the population maximum)
// plus ngc_multinode_perf's line-rate rule (90% of the port rate), on
// rails quiet enough for them (spread.go); noisier rails are judged
// against their own noise. The robust z-score, absolute limits and
// baseline stay off: they need figures only the operator knows.
func DefaultThresholds() Thresholds {
	return Thresholds{LatencyFactor: 2.1, BandwidthFraction: 0.93, LineRateFraction: 0.9, TailFactor: 5,
		QuietSpread: defaultQuietSpread, MaxSpread: defaultMaxSpread, OutlierZ: defaultOutlierZ, ExcludeConfidence: defaultExcludeConfidence}
}

// The noise defaults. Hardware rails repeat within a few percent (perftest
// runs differ by 1-3%), so 5% is quiet; emulated ones spread 10-50%. Four
// robust SDs leave about one healthy cell in 10,000 of a normal rail
// outside, and a cell 4x off a rail noisier than 50% cannot be told from
// its noise at all. A suspect below half confidence (LowConfidence) is
// one the matrix itself says it cannot tell from a neighbour.
const (
	defaultQuietSpread       = 0.05
	defaultMaxSpread         = 0.5
	defaultOutlierZ          = 4
	defaultExcludeConfidence = LowConfidence
)

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
	if !(t.QuietSpread > 0) || math.IsInf(t.QuietSpread, 0) {
		t.QuietSpread = d.QuietSpread
	}
	if !(t.MaxSpread >= t.QuietSpread) || math.IsInf(t.MaxSpread, 0) {
		t.MaxSpread = max(d.MaxSpread, t.QuietSpread)
	}
	if !(t.OutlierZ >= 1) || math.IsInf(t.OutlierZ, 0) {
		t.OutlierZ = d.OutlierZ
	}
	if !(t.ExcludeConfidence > 0 && t.ExcludeConfidence <= 1) {
		t.ExcludeConfidence = d.ExcludeConfidence
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
