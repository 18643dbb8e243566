package matrix

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

var randomClasses = []probe.Class{probe.ClassPortDown, probe.ClassRetryExceeded, probe.ClassTimeout, probe.ClassPeerLost,
	probe.ClassInvalidGID, probe.ClassMTUMismatch, probe.ClassInternal, probe.ClassTester, probe.ClassResource, probe.ClassSkipped}

// randomSweep is a seeded sweep with everything the analysis tells apart:
// faults of every class, noise, gaps, retests, cross-rail and unplaceable
// cells, odd inventories, labels, baselines, optional rules and
// TestedOnly. The golden files hold some of them (goldenRandomSeeds), and
// the compact-form and parallel tests run many more.
func randomSweep(rng *rand.Rand) ([]Node, []Cell, Thresholds) {
	n, rails := 2+rng.Intn(14), 1+rng.Intn(4)
	if rng.Intn(10) == 0 {
		n = 30 + rng.Intn(20)
	}
	f := newFixture(n, rails)
	randomInventory(rng, f)
	randomFaults(rng, f, n, rails)
	randomRetests(rng, f)
	randomOddCells(rng, f, n, rails)
	return f.nodes, f.cells, randomThresholds(rng, n, rails)
}

func randomInventory(rng *rand.Rand, f *fixture) {
	switch rng.Intn(5) {
	case 0:
		f.labelLeaves(1 + rng.Intn(5))
	case 1:
		for i := range f.nodes {
			f.nodes[i].Labels = map[string]string{"rack": fmt.Sprintf("r%d", rng.Intn(3)), "pod": fmt.Sprintf("p%d", i%2)}
		}
	}
	for i := range f.nodes {
		nd := &f.nodes[i]
		switch rng.Intn(12) {
		case 0:
			nd.State = []string{"dead", "suspect", "left"}[rng.Intn(3)]
		case 1:
			nd.Ports = nil // no inventory: every rail
		case 2:
			nd.Ports = nd.Ports[:rng.Intn(len(nd.Ports))]
		case 3:
			nd.Ports = append([]probe.Port(nil), nd.Ports...)
			p := &nd.Ports[rng.Intn(len(nd.Ports))]
			p.State, p.UnusableWhy, p.RateGbps = "DOWN", "no carrier", 0
		case 4:
			nd.Ports = append([]probe.Port(nil), nd.Ports...)
			for r := range nd.Ports {
				nd.Ports[r].Device = fmt.Sprintf("rxe%d", r)
				nd.Ports[r].RateGbps = 200
			}
		case 5:
			nd.Labels = map[string]string{}
		}
	}
}

func randomFaults(rng *rand.Rand, f *fixture, n, rails int) {
	for k := rng.Intn(4); k > 0; k-- {
		node, rail := nodeName(rng.Intn(n)), rng.Intn(rails+1)-1
		switch rng.Intn(6) {
		case 0:
			c := randomClasses[rng.Intn(len(randomClasses))]
			fix := ""
			if rng.Intn(2) == 0 {
				fix = "do " + string(c)
			}
			f.touching(node, rail, fail(c, "cause "+string(c), fix))
		case 1:
			f.touching(node, rail, slow(2+rng.Float64()*6))
		case 2:
			f.touching(node, rail, scaleBW(0.2+rng.Float64()*0.7))
		case 3:
			f.touching(node, rail, tail(3+rng.Float64()*30))
		case 4:
			f.onRail(rng.Intn(rails), fail(probe.ClassRetryExceeded, "retry exceeded", ""))
		default:
			inHalf := func(s string) bool { return s >= nodeName(n/2) }
			f.onRail(rng.Intn(rails), func(c *Cell) {
				if inHalf(c.Src) != inHalf(c.Dst) {
					fail(probe.ClassPortDown, "border", "")(c)
				}
			})
		}
	}
	noise := rng.Float64() * rng.Float64() * 0.3
	for i := range f.cells {
		c := &f.cells[i]
		if rng.Float64() >= noise {
			continue
		}
		switch rng.Intn(7) {
		case 0:
			fail(randomClasses[rng.Intn(len(randomClasses))], "noise", "")(c)
		case 1:
			slow(1.5 + rng.Float64()*4)(c)
		case 2:
			scaleBW(rng.Float64())(c)
		case 3:
			c.Class, c.Error = "", &probe.Error{Cause: "classless"} // normalised from the error
		case 4:
			c.Class = "" // normalised from the figures
		case 5:
			if c.Latency != nil {
				l := *c.Latency
				l.P50Ns = []float64{0, -5, math.Inf(1), 1e9}[rng.Intn(4)]
				c.Latency = &l
			}
		default:
			if c.Bandwidth != nil {
				b := *c.Bandwidth
				b.MsgRate = b.Gbps * 1e9 / 8 / 4096 // small messages: no line-rate rule
				b.Gbps *= 0.5
				c.Bandwidth = &b
			}
		}
	}
	if rng.Intn(3) == 0 {
		f.drop(func(*Cell) bool { return rng.Float64() < 0.1 })
	}
	if rng.Intn(15) == 0 {
		f.cells = nil // nothing measured yet
	}
}

func randomRetests(rng *rand.Rand, f *fixture) {
	share := rng.Float64() * 0.2
	for i := range f.cells {
		if rng.Float64() >= share {
			continue
		}
		c := &f.cells[i]
		for k := 1 + rng.Intn(3); k > 0; k-- {
			a := Attempt{Round: c.Round + k}
			switch rng.Intn(4) {
			case 0, 1:
				a.Class = probe.ClassOK
				a.Latency = &probe.Latency{Samples: 100, P50Ns: 900 + rng.Float64()*2000, P99Ns: 1500 + rng.Float64()*3000}
				if rng.Intn(2) == 0 {
					a.Bandwidth = &probe.Bandwidth{Gbps: 100 + rng.Float64()*300, MsgRate: 7e5}
				}
			case 2:
				cl := randomClasses[rng.Intn(len(randomClasses))]
				a.Class, a.Error = cl, &probe.Error{Class: cl, Cause: "retest " + string(cl)}
			default:
				a.Error = &probe.Error{Class: probe.ClassTimeout, Cause: "classless retest"}
			}
			c.Retests = append(c.Retests, a)
		}
	}
}

func randomOddCells(rng *rand.Rand, f *fixture, n, rails int) {
	if len(f.cells) == 0 {
		return
	}
	for k := rng.Intn(3); k > 0; k-- {
		c := f.cells[rng.Intn(len(f.cells))]
		switch rng.Intn(6) {
		case 0:
			c.Src = "stranger"
		case 1:
			c.Dst = c.Src
		case 2:
			c.Rail = rails + rng.Intn(2) // beyond the inventory: widens the rails
		case 3:
			c.Rail = -1
		case 4:
			c.Round++ // a later duplicate wins
			slow(3)(&c)
		default:
			c.Rail = maxRails
		}
		f.cells = append(f.cells, c)
	}
	if rails > 1 && rng.Intn(4) == 0 {
		for k := 2 + rng.Intn(30); k > 0; k-- {
			c := f.cells[rng.Intn(len(f.cells))]
			dr := (c.Rail + 1 + rng.Intn(rails-1)) % rails
			if rng.Intn(20) == 0 {
				dr = -1
			}
			c.DstRail = &dr
			if rng.Intn(3) == 0 {
				slow(4)(&c)
			}
			f.cells = append(f.cells, c)
		}
	}
}

func randomThresholds(rng *rand.Rand, n, rails int) Thresholds {
	th := DefaultThresholds()
	if rng.Intn(6) == 0 {
		th = Thresholds{} // the defaults
	}
	if rng.Intn(6) == 0 {
		th = Thresholds{LatencyFactor: 1.5, BandwidthFraction: 0.97}
	}
	if rng.Intn(3) == 0 {
		th.RobustZ = 3 + rng.Float64()*5
	}
	if rng.Intn(4) == 0 {
		th.MaxP99Ns = 2000 + rng.Float64()*20000
	}
	if rng.Intn(4) == 0 {
		th.MinGbps = 300 + rng.Float64()*100
	}
	if rng.Intn(4) == 0 {
		th.TailFactor = 1.2 + rng.Float64()*4
	}
	if rng.Intn(3) == 0 {
		th.TestedOnly = true
	}
	switch rng.Intn(5) {
	case 0:
		th.GroupLabel = "-"
	case 1:
		th.GroupLabel = "pod"
	}
	if rng.Intn(4) == 0 {
		b := newFixture(max(2, n-rng.Intn(3)), rails)
		if rng.Intn(2) == 0 {
			b.touching(nodeName(0), AllRails, slow(0.5)) // the reference was faster
		}
		base := BaselineFrom(Build(b.nodes, b.cells, DefaultThresholds()), fmt.Sprintf("base-%d", rng.Intn(3)))
		th.Baseline, th.BaselineName = base, base.Name
		if rng.Intn(2) == 0 {
			th.BaselineLatency, th.BaselineBandwidth = 0.1, 0.05
		}
		if rng.Intn(3) == 0 {
			th.BaselineName = ""
		}
	}
	return th
}
