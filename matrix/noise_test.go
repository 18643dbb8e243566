package matrix

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// noisyFabric is a fabric measured through heavy noise, as the lab's
// Soft-RoCE VMs measure: every cell's latency and bandwidth are drawn
// log-normally around a common value with a robust spread of about sigma
// (log space), and one cell in twenty of each lands in a heavier tail.
// Deterministic for the seed.
func noisyFabric(n, rails int, sigma float64, seed uint64) *fixture {
	f := newFixture(n, rails)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := range f.nodes {
		for r := range f.nodes[i].Ports {
			p := &f.nodes[i].Ports[r]
			p.Device, p.LinkLayer, p.RateGbps, p.MTU = fmt.Sprintf("rxe%d", r), "Ethernet", 10, 1024
		}
	}
	draw := func() float64 {
		g := rng.NormFloat64() * sigma
		if rng.Float64() < 0.05 {
			g *= 2
		}
		return math.Exp(g)
	}
	for i := range f.cells {
		c := &f.cells[i]
		c.SrcDevice, c.DstDevice = fmt.Sprintf("rxe%d", c.Rail), fmt.Sprintf("rxe%d", c.Rail)
		p50 := 300e3 * draw()
		c.Latency = &probe.Latency{Samples: 200, MinNs: p50 * 0.8, P50Ns: p50, P99Ns: p50 * (1.5 + rng.Float64()), MaxNs: p50 * 4}
		c.Bandwidth = &probe.Bandwidth{Gbps: 0.12 * draw(), MsgRate: 200, Bytes: 1 << 20, Duration: 0.07}
	}
	return f
}

// egress scales the bandwidth of node's cells as initiator by factor.
func egress(f *fixture, node string, factor float64) {
	for i := range f.cells {
		if c := &f.cells[i]; c.Src == node && c.Bandwidth != nil {
			b := *c.Bandwidth
			b.Gbps *= factor
			c.Bandwidth = &b
		}
	}
}

// noiseRates builds runs seeded sweeps of n nodes on a rail of noise
// sigma: clean, with node-02's egress at a third and a fifth of the rest,
// and with node-03 failing every cell. It counts the clean sweeps that
// were unhealthy and that excluded anybody, and the faulty ones whose
// exclude list was exactly the broken node.
type noiseRates struct{ unhealthy, excluded, found3x, found5x, foundFailed int }

func measureNoise(n int, sigma float64, runs int) noiseRates {
	var r noiseRates
	exactly := func(f *fixture, node string) bool {
		ex := f.build().Excluded(ExcludeOptions{})
		return len(ex) == 1 && ex[0] == node
	}
	for seed := uint64(1); seed <= uint64(runs); seed++ {
		m := noisyFabric(n, 1, sigma, seed).build()
		if !m.Healthy {
			r.unhealthy++
		}
		if len(m.Excluded(ExcludeOptions{})) > 0 {
			r.excluded++
		}
		f := noisyFabric(n, 1, sigma, seed)
		egress(f, "node-02", 1.0/3)
		if exactly(f, "node-02") {
			r.found3x++
		}
		f = noisyFabric(n, 1, sigma, seed)
		egress(f, "node-02", 0.2)
		if exactly(f, "node-02") {
			r.found5x++
		}
		f = noisyFabric(n, 1, sigma, seed)
		f.touching("node-03", 0, fail(probe.ClassRetryExceeded, "retry exceeded", "check the path"))
		if exactly(f, "node-03") {
			r.foundFailed++
		}
	}
	return r
}

// TestJudgingUnderNoise holds the exclude list's precision and recall on
// noisy rails, on fixed seeds: a healthy node is excluded from few clean
// sweeps of four nodes (where 12 cells are all there is to tell noise
// from a fault) and from none of sixteen; a node failing every cell is
// always found, alone; a transmit side at a fifth is found on four nodes
// most of the time and a third on sixteen always.
func TestJudgingUnderNoise(t *testing.T) {
	const runs = 200
	cases := []struct {
		n                    int
		sigma                float64
		maxExcluded          int
		min3x, min5x, minAll int
	}{
		{4, 0.3, runs / 100, 0, runs * 6 / 10, runs},
		{16, 0.3, 0, runs * 95 / 100, runs, runs},
		{16, 0.45, 0, runs * 9 / 10, runs, runs},
	}
	for _, c := range cases {
		r := measureNoise(c.n, c.sigma, runs)
		t.Logf("%d nodes, noise %.2f: %d/%d clean sweeps unhealthy, %d excluded someone; egress /3 found %d, /5 %d; failed node %d",
			c.n, c.sigma, r.unhealthy, runs, r.excluded, r.found3x, r.found5x, r.foundFailed)
		if r.excluded > c.maxExcluded || r.found3x < c.min3x || r.found5x < c.min5x || r.foundFailed < c.minAll {
			t.Errorf("%d nodes, noise %.2f: excluded from %d clean sweeps (at most %d); found egress /3 %d (want %d), /5 %d (%d), a failed node %d (%d)",
				c.n, c.sigma, r.excluded, c.maxExcluded, r.found3x, c.min3x, r.found5x, c.min5x, r.foundFailed, c.minAll)
		}
	}
}

// The lab's cases as the matrix sees them: a clean noisy sweep is healthy
// with nobody excluded; a rate-limited transmit side is the first suspect,
// with its direction; a node failing every cell takes the blame alone, its
// peers' cells with it counted as its own.
func TestNoisyLabCases(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		m := noisyFabric(4, 1, 0.3, seed).build()
		if !m.Healthy || len(m.Suspects) != 0 {
			t.Errorf("clean seed %d: %s", seed, describe(m))
		}
		f := noisyFabric(4, 1, 0.3, seed)
		egress(f, "node-02", 0.2)
		m = f.build()
		if s := m.Suspects; len(s) == 0 || s[0].Node != "node-02" || s[0].Direction != "egress" || s[0].Verdict != VerdictLowBandwidth ||
			strings.Join(m.Excluded(ExcludeOptions{}), ",") != "node-02" {
			t.Errorf("egress /5 seed %d: %s", seed, describe(m))
		}
		f = noisyFabric(4, 1, 0.3, seed)
		f.touching("node-03", 0, fail(probe.ClassRetryExceeded, "retry exceeded", "check the path"))
		m = f.build()
		if s := m.Suspects; len(s) != 1 || s[0].Node != "node-03" || s[0].Bad != 6 || s[0].Confidence < 0.5 {
			t.Errorf("retry-exceeded seed %d: %s", seed, describe(m))
		}
	}
}

func describe(m *Matrix) string {
	var b strings.Builder
	fmt.Fprintf(&b, "healthy %v counts %v excluded %v\n", m.Healthy, m.Counts, m.Excluded(ExcludeOptions{}))
	for i, s := range m.Suspects {
		if i == 4 {
			break
		}
		fmt.Fprintf(&b, "  %d. %s %s/%s rail %d %s conf %.2f dir %s bad %d/%d hard %d: %s\n", i+1, s.Kind, s.Node, s.Device, s.Rail, s.Verdict,
			s.Confidence, s.Direction, s.Bad, s.Total, s.HardFailures, s.Reason)
	}
	return b.String()
}
