package matrix

import (
	"math"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func TestSlowLatencyVerdict(t *testing.T) {
	f := newFixture(4, 1)
	// Pin the population minimum to know the figures.
	for i := range f.cells {
		f.cells[i].Latency = &probe.Latency{P50Ns: 1060 + float64(i)}
	}
	f.cell("node-03", "node-04", 0).Latency = &probe.Latency{P50Ns: 5200}
	f.cell("node-04", "node-03", 0).Latency = &probe.Latency{P50Ns: 2226} // exactly 2.1x: not slow
	m := f.build()
	if m.Counts[VerdictSlowLatency] != 1 {
		t.Fatalf("counts %v", m.Counts)
	}
	for _, c := range m.Cells {
		if c.Src == "node-03" && c.Dst == "node-04" {
			want := "p50 5.2 µs is 4.9x the rail-0 minimum 1.06 µs (limit 2.1x)"
			if c.Verdict != VerdictSlowLatency || c.Reason != want {
				t.Fatalf("got %s %q, want %q", c.Verdict, c.Reason, want)
			}
		}
	}
}

// Each rail is judged against itself: a slower rail is not "slow". Rail 1
// is an older 100G generation, so the line-rate rule agrees.
func TestThresholdsPerRail(t *testing.T) {
	f := newFixture(4, 2)
	for i := range f.nodes {
		f.nodes[i].Ports[1].RateGbps = 100
	}
	for i := range f.cells {
		if c := &f.cells[i]; c.Rail == 1 {
			slow(3)(c)
			b := *c.Bandwidth
			b.Gbps /= 4
			b.MsgRate /= 4 // same 64 KiB messages, a quarter of the rate
			c.Bandwidth = &b
		}
	}
	if m := f.build(); !m.Healthy {
		t.Fatalf("counts %v", m.Counts)
	}
}

func TestLowBandwidthVerdict(t *testing.T) {
	f := newFixture(8, 2)
	f.touching("node-02", 0, func(c *Cell) {
		b := *c.Bandwidth
		b.Gbps = 200
		c.Bandwidth = &b
	})
	m := f.build()
	if m.Counts[VerdictLowBandwidth] != 14 || m.Counts[VerdictOK] != 98 || m.Healthy {
		t.Fatalf("counts %v", m.Counts)
	}
	for _, c := range m.Cells {
		if c.Verdict == VerdictLowBandwidth && !strings.HasPrefix(c.Reason, "bandwidth 200 Gb/s is 50.9% of the rail-0 maximum 393 Gb/s (limit 93%)") {
			t.Fatalf("reason %q", c.Reason)
		}
	}
	if len(m.Suspects) != 1 {
		t.Fatalf("suspects %+v", m.Suspects)
	}
	s := m.Suspects[0]
	if s.Kind != KindHCA || s.Node != "node-02" || s.Device != "mlx5_0" || s.Rail != 0 ||
		s.Verdict != VerdictLowBandwidth || s.Class != "" || s.Bad != 14 || s.Total != 14 ||
		!strings.Contains(s.Fix, "negotiated rate") {
		t.Fatalf("suspect %+v", s)
	}
	if r := m.NodeRollups[1]; r.Key != "node-02" || r.LowBandwidth != 14 || r.MinGbps != 200 {
		t.Fatalf("rollup %+v", r)
	}
}

// A cell both slow and narrow is counted once, as slow, with both reasons.
func TestSlowAndLowBandwidth(t *testing.T) {
	f := newFixture(3, 1)
	c := f.cell("node-01", "node-02", 0)
	c.Latency = &probe.Latency{P50Ns: 9000}
	c.Bandwidth = &probe.Bandwidth{Gbps: 10}
	m := f.build()
	r := m.Cells[0]
	if r.Verdict != VerdictSlowLatency || !strings.Contains(r.Reason, "p50 9 µs") || !strings.Contains(r.Reason, "bandwidth 10 Gb/s") {
		t.Fatalf("%+v", r)
	}
}

func TestFormatting(t *testing.T) {
	for _, c := range []struct {
		ns   float64
		want string
	}{
		{850, "850 ns"}, {999.4, "999 ns"}, {1060, "1.06 µs"}, {5200, "5.2 µs"}, {12345, "12.3 µs"},
		{250000, "250 µs"}, {1234567, "1.23 ms"}, {3e9, "3 s"},
	} {
		if got := formatNs(c.ns); got != c.want {
			t.Errorf("formatNs(%v) = %q, want %q", c.ns, got, c.want)
		}
	}
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {93.00000000000001, "93"}, {0.001234, "0.00123"}, {12345, "12300"}, {-4.567, "-4.57"},
		{math.Inf(1), "+Inf"},
	} {
		if got := sig3(c.v); got != c.want {
			t.Errorf("sig3(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}
