// Package synth makes large, deterministic sweep results for the web
// package's tests and browser benchmarks: a matrix of any size with the
// faults an operator must spot, without running a sweep.
package synth

import (
	"fmt"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// Faults a Fabric carries, by node index (0-based) when the fabric is big
// enough to have them.
const (
	DeadHCANode  = 9  // its HCA on DeadHCARail is down: a cross in that rail
	DeadHCARail  = 1  // modulo the rail count
	SlowNode     = 19 // p50 x4 on every rail: a slow row and column
	FlakySrc     = 29 // FlakySrc → FlakyDst failed once, then passed a retest
	FlakyDst     = 30
	GroupSize    = 8 // nodes per switch group (label "leaf")
	LowBWGroup   = 5 // the group whose links run at half bandwidth on LowBWRail
	LowBWRail    = 0
	LineRateGbps = 400
)

// Name is node i's name: node-0001 …, sorting in numeric order.
func Name(i int) string { return fmt.Sprintf("node-%04d", i+1) }

// Faults picks what a fabric carries.
type Faults struct {
	// Standard: the dead HCA, slow node, half-bandwidth group and flaky
	// pair of the constants above.
	Standard bool
	// DeadHCA: only the standard dead HCA, the fault the live view's
	// tests watch appear on an otherwise healthy fabric.
	DeadHCA bool
	// RailDown ≥ 0 takes every node's HCA on that rail down: the
	// rail-wide fault that turns an "all rails (worst)" view solid.
	RailDown int
}

var (
	// StandardFaults is what Fabric and Matrix inject.
	StandardFaults = Faults{Standard: true, RailDown: -1}
	// NoFaults is a healthy fabric.
	NoFaults = Faults{RailDown: -1}
)

// Fabric returns nodes and cells for n nodes on rails rails with the
// standard faults, every cell measured.
func Fabric(n, rails int) ([]matrix.Node, []matrix.Cell) { return FabricWith(n, rails, StandardFaults) }

// FabricWith is Fabric with the faults f. Latency and bandwidth figures
// live in two big slices so 8 M cells do not cost 16 M small allocations.
// Past a few million cells a []Cell costs about 150 bytes a cell (20 GB at
// 4,096 x 8): SourceWith hands out the same cells one at a time instead.
func FabricWith(n, rails int, f Faults) ([]matrix.Node, []matrix.Cell) {
	g := newGen(n, rails, f)
	total := n * (n - 1) * rails
	cells := make([]matrix.Cell, 0, total)
	lats := make([]probe.Latency, total)
	bws := make([]probe.Bandwidth, total)
	for r := 0; r < rails; r++ {
		for s := 0; s < n; s++ {
			for d := 0; d < n; d++ {
				if s == d {
					continue
				}
				k := len(cells)
				cells = append(cells, g.cell(s, d, r, &lats[k], &bws[k]))
			}
		}
	}
	return g.nodes, cells
}

// gen makes one fabric's nodes, and its cells on request: FabricWith and
// Source give the same cells because both come from here.
type gen struct {
	n, rails int
	f        Faults
	deadRail int // the standard dead HCA's rail; -1 = none
	nodes    []matrix.Node
	names    []string // Name(i), made once: Source reads cells by the million
	devs     []string
	down     *probe.Error   // the dead HCA's error
	railDown []*probe.Error // by initiator, with a whole rail down
	lost     *probe.Error   // the flaky pair's first attempt
}

func newGen(n, rails int, f Faults) *gen {
	g := &gen{n: n, rails: rails, f: f, deadRail: -1}
	if f.Standard || f.DeadHCA {
		g.deadRail = DeadHCARail % rails
	}
	g.nodes, g.names = make([]matrix.Node, n), make([]string, n)
	g.devs = make([]string, rails)
	for r := range g.devs {
		g.devs[r] = fmt.Sprintf("mlx5_%d", r)
	}
	for i := range g.nodes {
		g.names[i] = Name(i)
		g.nodes[i] = matrix.Node{Name: g.names[i], State: "alive",
			Labels: map[string]string{"leaf": fmt.Sprintf("L%02d", i/GroupSize)}}
		for r := 0; r < rails; r++ {
			p := probe.Port{Device: g.devs[r], Port: 1, Rail: r, LinkLayer: "InfiniBand", State: "ACTIVE",
				RateGbps: LineRateGbps, MTU: 4096, Usable: true}
			if (i == DeadHCANode && r == g.deadRail) || r == f.RailDown {
				p.State, p.Usable, p.UnusableWhy = "DOWN", false, "port DOWN (phys_state Disabled)"
			}
			g.nodes[i].Ports = append(g.nodes[i].Ports, p)
		}
	}
	portDown := func(dev, node string) *probe.Error {
		return &probe.Error{Class: probe.ClassPortDown, Verb: "ibv_open_device",
			Cause: fmt.Sprintf("%s port 1 on %s is DOWN", dev, node),
			Fix:   "check the cable and the switch port; ibstat should show State: Active"}
	}
	g.down = portDown(g.devs[DeadHCARail%rails], Name(DeadHCANode))
	// With a whole rail down, each cell blames its initiator's port: one
	// error per node, not per cell.
	if f.RailDown >= 0 && f.RailDown < rails {
		g.railDown = make([]*probe.Error, n)
		for i := range g.railDown {
			g.railDown[i] = portDown(g.devs[f.RailDown], Name(i))
		}
	}
	g.lost = &probe.Error{Class: probe.ClassRetryExceeded, Verb: "ibv_poll_cq", WCStatus: 12,
		Cause: "packets to the peer were lost (transport retry counter exceeded)",
		Fix:   "check the cable, optics and switch port counters on the path"}
	return g
}

// cell is s → d on rail r; its figures go into *lat and *bw, which the
// cell points to when it carries them.
func (g *gen) cell(s, d, r int, lat *probe.Latency, bw *probe.Bandwidth) matrix.Cell {
	c, l, b, hasLat, hasBW := g.figures(s, d, r)
	if hasLat {
		*lat, c.Latency = l, lat
	}
	if hasBW {
		*bw, c.Bandwidth = b, bw
	}
	return c
}

// figures is the cell s → d on rail r without its figure pointers, and
// the figures by value: Source.Figures reads it allocating nothing.
func (g *gen) figures(s, d, r int) (c matrix.Cell, lat probe.Latency, bw probe.Bandwidth, hasLat, hasBW bool) {
	jitter := noise(s, d, r) * 60
	lat = probe.Latency{Samples: 1000, MinNs: 900 + jitter/2, P50Ns: 1000 + jitter,
		P90Ns: 1200 + jitter, P99Ns: 1500 + jitter, P999Ns: 2200 + jitter, MaxNs: 3000 + 10*jitter,
		StdevNs: 90}
	bw = probe.Bandwidth{Gbps: 390 + jitter/20, MsgRate: 7e5, Bytes: 1 << 24, Duration: 0.01}
	c = matrix.Cell{Src: g.names[s], Dst: g.names[d], Rail: r, SrcDevice: g.devs[r], DstDevice: g.devs[r],
		Round: 1 + (s+d)%max(g.n-1, 1), Class: probe.ClassOK}
	hasLat, hasBW = true, true
	switch {
	case r == g.f.RailDown:
		c.Class, c.Error, hasLat, hasBW = probe.ClassPortDown, g.railDown[s], false, false
	case r == g.deadRail && (s == DeadHCANode || d == DeadHCANode):
		c.Class, c.Error, hasLat, hasBW = probe.ClassPortDown, g.down, false, false
	case !g.f.Standard:
	case s == SlowNode || d == SlowNode:
		for _, p := range []*float64{&lat.P50Ns, &lat.P90Ns, &lat.P99Ns, &lat.P999Ns, &lat.MaxNs} {
			*p *= 4
		}
	case r == LowBWRail && (s/GroupSize == LowBWGroup) != (d/GroupSize == LowBWGroup):
		bw.Gbps /= 2
	case s == FlakySrc && d == FlakyDst:
		l, b := lat, bw
		c.Retests = []matrix.Attempt{{Round: g.n, Class: probe.ClassOK, Latency: &l, Bandwidth: &b}}
		c.Class, c.Error, hasLat, hasBW = probe.ClassRetryExceeded, g.lost, false, false
	}
	return c, lat, bw, hasLat, hasBW
}

// noise is a deterministic pseudo-random number in [0, 1) per cell, so the
// figures compress like measurements do rather than like a pattern.
func noise(s, d, r int) float64 {
	x := uint64(s)<<42 ^ uint64(d)<<21 ^ uint64(r)
	x += 0x9e3779b97f4a7c15 // splitmix64
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}

// Matrix builds Fabric(n, rails) with the default thresholds.
func Matrix(n, rails int) *matrix.Matrix { return MatrixWith(n, rails, StandardFaults) }

// MatrixWith analyses FabricWith(n, rails, f) with the default thresholds,
// compactly, as the coordinator serves it (Materialize gives Build's form).
func MatrixWith(n, rails int, f Faults) *matrix.Matrix {
	nodes, cells := FabricWith(n, rails, f)
	return matrix.Analyse(nodes, nil, cells, matrix.DefaultThresholds())
}
