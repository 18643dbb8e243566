package matrix

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// buildWith breaks a fresh 8-node, 1-rail fixture and builds it with th.
func buildWith(th Thresholds, break_ func(f *fixture)) *Matrix {
	f := newFixture(8, 1)
	break_(f)
	return Build(f.nodes, f.cells, th)
}

func everyCell(fn func(c *Cell)) func(f *fixture) {
	return func(f *fixture) {
		for i := range f.cells {
			fn(&f.cells[i])
		}
	}
}

// ruleCase breaks an 8 x 1 fabric and judges it with th.
type ruleCase struct {
	name    string
	th      Thresholds
	break_  func(f *fixture)
	healthy bool
	reason  string // in every bad cell's reason
}

func lineRateCases() []ruleCase {
	at87 := everyCell(scaleBW(0.87)) // ~340 of 400 Gb/s everywhere: the population cannot see it
	return []ruleCase{
		{"below 90% of the port", DefaultThresholds(), at87, false, "% of the 400 Gb/s port rate (limit 90%)"},
		{"rule off", Thresholds{LatencyFactor: 2.1, BandwidthFraction: 0.93}, at87, true, ""},
		{"rule set to 0.8", Thresholds{LatencyFactor: 2.1, BandwidthFraction: 0.93, LineRateFraction: 0.8}, at87, true, ""},
		{"software RDMA", DefaultThresholds(), func(f *fixture) {
			at87(f)
			for i := range f.nodes {
				f.nodes[i].Ports[0].Device = "rxe0"
			}
		}, true, ""},
		{"small messages", DefaultThresholds(), everyCell(func(c *Cell) {
			b := *c.Bandwidth
			b.Gbps *= 0.5
			b.MsgRate = b.Gbps * 1e9 / 8 / 4096 // 4 KiB messages: message-rate bound
			c.Bandwidth = &b
		}), true, ""},
		{"unknown port rate", DefaultThresholds(), func(f *fixture) {
			at87(f)
			for i := range f.nodes {
				f.nodes[i].Ports[0].RateGbps = 0
			}
		}, true, ""},
		{"slower end decides", DefaultThresholds(), func(f *fixture) {
			for i := range f.nodes {
				f.nodes[i].Ports[0].RateGbps = 800 // 390 of 800 would fail...
			}
			f.nodes[2].Ports[0].RateGbps = 400 // ...but not against node-03
		}, false, "of the 800 Gb/s port rate"},
	}
}

func TestLineRateRule(t *testing.T) {
	for _, c := range lineRateCases() {
		t.Run(c.name, func(t *testing.T) {
			m := buildWith(c.th, c.break_)
			if m.Healthy != c.healthy {
				t.Fatalf("healthy=%v, want %v:\n%s", m.Healthy, c.healthy, m.Summary())
			}
			if c.reason == "" {
				return
			}
			for _, r := range m.Cells {
				if r.Verdict != VerdictOK && !strings.Contains(r.Reason, c.reason) {
					t.Fatalf("cell %s->%s: %q lacks %q", r.Src, r.Dst, r.Reason, c.reason)
				}
				if (r.Src == "node-03" || r.Dst == "node-03") && c.name == "slower end decides" && r.Verdict != VerdictOK {
					t.Fatalf("cell %s->%s judged against the faster end: %s", r.Src, r.Dst, r.Reason)
				}
			}
		})
	}
}

// robustZCase breaks an 8 x 1 fabric for the robust-z rule: count cells
// must get verdict, each with reason in its reason.
type robustZCase struct {
	name    string
	th      Thresholds
	break_  func(f *fixture)
	verdict Verdict
	count   int
	reason  string
}

func robustZCases() []robustZCase {
	z := Thresholds{LatencyFactor: 2.1, BandwidthFraction: 0.93, RobustZ: 6}
	return []robustZCase{
		{"p50 1.5x: under ClusterKit's 2.1x", DefaultThresholds(), func(f *fixture) { f.touching("node-04", 0, slow(1.5)) }, VerdictSlowLatency, 0, ""},
		{"p50 1.5x: 20 robust SDs", z, func(f *fixture) { f.touching("node-04", 0, slow(1.5)) }, VerdictSlowLatency, 14, "robust SDs above the rail-0 median"},
		{"p99 20x", z, func(f *fixture) { f.touching("node-04", 0, tail(20)) }, VerdictSlowLatency, 14, "robust SDs above the rail-0 median p99"},
		{"bandwidth 95%", Thresholds{LatencyFactor: 2.1, BandwidthFraction: 0.93, RobustZ: 4},
			func(f *fixture) { f.touching("node-04", 0, scaleBW(0.95)) }, VerdictLowBandwidth, 14, "robust SDs below"},
		{"tight rail, 3% off: the 1% floor keeps it", z, func(f *fixture) {
			everyCell(func(c *Cell) { c.Latency = &probe.Latency{P50Ns: 1000, P99Ns: 1200} })(f)
			f.cell("node-01", "node-02", 0).Latency = &probe.Latency{P50Ns: 1030, P99Ns: 1200}
		}, VerdictSlowLatency, 0, ""},
		{"tight rail, 10% off", z, func(f *fixture) {
			everyCell(func(c *Cell) { c.Latency = &probe.Latency{P50Ns: 1000, P99Ns: 1200} })(f)
			f.cell("node-01", "node-02", 0).Latency = &probe.Latency{P50Ns: 1100, P99Ns: 1200}
		}, VerdictSlowLatency, 1, "robust SDs"},
	}
}

func TestRobustZRule(t *testing.T) {
	z := Thresholds{LatencyFactor: 2.1, BandwidthFraction: 0.93, RobustZ: 6}
	for _, c := range robustZCases() {
		t.Run(c.name, func(t *testing.T) {
			m := buildWith(c.th, c.break_)
			if got := m.Counts[c.verdict]; got != c.count {
				t.Fatalf("%d %s cells, want %d:\n%s", got, c.verdict, c.count, m.Summary())
			}
			for _, r := range m.Cells {
				if r.Verdict == c.verdict && !strings.Contains(r.Reason, c.reason) {
					t.Fatalf("reason %q lacks %q", r.Reason, c.reason)
				}
			}
		})
	}
	// Too few cells for a spread: the rule stays quiet rather than guess.
	f := newFixture(2, 1)
	f.touching("node-01", 0, tail(50))
	if m := Build(f.nodes, f.cells, z); !m.Healthy {
		t.Fatalf("2 cells judged by MAD:\n%s", m.Summary())
	}
}

func TestAbsoluteLimits(t *testing.T) {
	th := DefaultThresholds()
	th.MaxP99Ns, th.MinGbps = 1550, 391
	m := buildWith(th, func(*fixture) {})
	slowN, lowN := 0, 0
	for _, r := range m.Cells {
		switch {
		case r.Latency.P99Ns > 1550:
			slowN++
			if r.Verdict != VerdictSlowLatency || !strings.Contains(r.Reason, "over the 1.55 µs limit") {
				t.Fatalf("p99 %v: %s %q", r.Latency.P99Ns, r.Verdict, r.Reason)
			}
		case r.Bandwidth.Gbps < 391:
			lowN++
			if r.Verdict != VerdictLowBandwidth || !strings.Contains(r.Reason, "under the 391 Gb/s minimum") {
				t.Fatalf("gbps %v: %s %q", r.Bandwidth.Gbps, r.Verdict, r.Reason)
			}
		default:
			if r.Verdict != VerdictOK {
				t.Fatalf("within limits yet %s: %q", r.Verdict, r.Reason)
			}
		}
	}
	if slowN == 0 || lowN == 0 {
		t.Fatalf("fixture does not exercise both limits: %d slow, %d low", slowN, lowN)
	}
}

// baselineSweep is an 8 x 1 fabric judged against last week's healthy
// sweep of the same fabric: drifts the population cannot see.
func baselineSweep() (*fixture, Thresholds) {
	good := newFixture(8, 1).build()
	th := DefaultThresholds()
	th.Baseline = BaselineFrom(good, "last-week")

	f := newFixture(8, 1)
	f.touching("node-04", 0, slow(1.2))      // +20% p50: the population sees nothing
	f.touching("node-06", 0, scaleBW(0.935)) // -6.5%: under -5%, over ClusterKit's 93%
	c := f.cell("node-01", "node-02", 0)     // exactly +10%: passes
	l := *c.Latency
	l.P50Ns *= 1.1
	c.Latency = &l
	return f, th
}

func TestBaselineRule(t *testing.T) {
	f, th := baselineSweep()
	m := Build(f.nodes, f.cells, th)

	if m.Thresholds.Baseline != nil || m.Thresholds.BaselineName != "last-week" ||
		m.Thresholds.BaselineLatency != 0.10 || m.Thresholds.BaselineBandwidth != 0.05 {
		t.Fatalf("stored thresholds %+v", m.Thresholds)
	}
	for _, r := range m.Cells {
		node4 := r.Src == "node-04" || r.Dst == "node-04"
		node6 := r.Src == "node-06" || r.Dst == "node-06"
		switch {
		case node4:
			if r.Verdict != VerdictSlowLatency || !strings.Contains(r.Reason, `over baseline "last-week"`) {
				t.Fatalf("%s->%s: %s %q", r.Src, r.Dst, r.Verdict, r.Reason)
			}
		case node6:
			if r.Verdict != VerdictLowBandwidth || !strings.Contains(r.Reason, "-6.5% under baseline") {
				t.Fatalf("%s->%s: %s %q", r.Src, r.Dst, r.Verdict, r.Reason)
			}
		case r.Verdict != VerdictOK:
			t.Fatalf("%s->%s: %s %q", r.Src, r.Dst, r.Verdict, r.Reason)
		}
	}
	if s := m.Suspects; len(s) != 2 || s[0].Node != "node-04" || s[1].Node != "node-06" {
		t.Fatalf("suspects:\n%s", m.Summary())
	}
	if !strings.Contains(m.Summary(), `rules: baseline "last-week" (p50 +10%, bandwidth -5%)`) {
		t.Fatalf("summary does not name the baseline:\n%s", m.Summary())
	}
}

// Bad cells never become the reference, and the file round-trips.
func TestBaselineFile(t *testing.T) {
	f := newFixture(4, 1)
	f.touching("node-02", 0, fail(probe.ClassPortDown, "down", ""))
	m := f.build()
	b := BaselineFrom(m, "monday")
	if len(b.Cells) != 6 {
		t.Fatalf("%d baseline cells, want the 6 ok ones", len(b.Cells))
	}
	var buf bytes.Buffer
	if err := b.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := LoadBaseline(&buf, "ignored")
	if err != nil || back.Name != "monday" || len(back.Cells) != 6 || back.Cells[0] != b.Cells[0] {
		t.Fatalf("round trip: %v %+v", err, back)
	}
	// A saved matrix is a baseline too.
	buf.Reset()
	if err := m.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	fromMatrix, err := LoadBaseline(&buf, "sweep.json")
	if err != nil || fromMatrix.Name != "sweep.json" || len(fromMatrix.Cells) != 6 {
		t.Fatalf("from matrix: %v %+v", err, fromMatrix)
	}
	for _, bad := range []string{
		`not json`,
		`{"kind": "something-else"}`,
		`{"kind": "rdmamesh-baseline", "cells": [{"src": "a", "rail": 0}]}`,
		`{"kind": "rdmamesh-baseline", "cells": [], "extra": 1}`,
	} {
		if _, err := LoadBaseline(strings.NewReader(bad), "bad.json"); err == nil || !strings.Contains(err.Error(), "bad.json") {
			t.Errorf("LoadBaseline(%s): %v", bad, err)
		}
	}
}

func TestThresholdsOrDefaults(t *testing.T) {
	// noise is the noise judgement's defaults, which a partly set
	// Thresholds gets too: without them every rail would be judged by
	// the fixed rules alone.
	noise := func(t Thresholds) Thresholds {
		t.QuietSpread, t.MaxSpread, t.OutlierZ, t.ExcludeConfidence = 0.05, 0.5, 4, 0.5
		return t
	}
	cases := []struct {
		name string
		in   Thresholds
		want Thresholds
	}{
		{"zero is the defaults", Thresholds{}, DefaultThresholds()},
		{"partly set: line rate stays off", Thresholds{LatencyFactor: 3}, noise(Thresholds{LatencyFactor: 3, BandwidthFraction: 0.93})},
		{"nonsense optional rules are off", Thresholds{LatencyFactor: 2, BandwidthFraction: 0.9, LineRateFraction: 1.5,
			RobustZ: -1, MaxP99Ns: math.NaN(), MinGbps: math.Inf(1), BaselineBandwidth: 1.2},
			noise(Thresholds{LatencyFactor: 2, BandwidthFraction: 0.9})},
		{"group label kept", Thresholds{LatencyFactor: 2, GroupLabel: "rack"}, noise(Thresholds{LatencyFactor: 2, BandwidthFraction: 0.93, GroupLabel: "rack"})},
		{"noise judgement set", Thresholds{LatencyFactor: 2, QuietSpread: 0.1, MaxSpread: 0.05, OutlierZ: 0.5, ExcludeConfidence: 0.8},
			Thresholds{LatencyFactor: 2, BandwidthFraction: 0.93, QuietSpread: 0.1, MaxSpread: 0.5, OutlierZ: 4, ExcludeConfidence: 0.8}},
	}
	for _, c := range cases {
		if got := c.in.orDefaults(); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

// The Thresholds JSON names a baseline but never embeds it.
func TestThresholdsJSON(t *testing.T) {
	th := DefaultThresholds()
	th.Baseline = &Baseline{Name: "b", Cells: []BaselineCell{{Src: "a", Dst: "b", P50Ns: 1}}}
	th.BaselineName = "b"
	raw, err := json.Marshal(th)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "cells") || !strings.Contains(string(raw), `"baseline":"b"`) {
		t.Fatalf("json %s", raw)
	}
}
