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
func FabricWith(n, rails int, f Faults) ([]matrix.Node, []matrix.Cell) {
	deadRail := -1 // the standard dead HCA's rail
	if f.Standard || f.DeadHCA {
		deadRail = DeadHCARail % rails
	}
	nodes := make([]matrix.Node, n)
	devs := make([]string, rails)
	for r := range devs {
		devs[r] = fmt.Sprintf("mlx5_%d", r)
	}
	for i := range nodes {
		nodes[i] = matrix.Node{Name: Name(i), State: "alive",
			Labels: map[string]string{"leaf": fmt.Sprintf("L%02d", i/GroupSize)}}
		for r := 0; r < rails; r++ {
			p := probe.Port{Device: devs[r], Port: 1, Rail: r, LinkLayer: "InfiniBand", State: "ACTIVE",
				RateGbps: LineRateGbps, MTU: 4096, Usable: true}
			if (i == DeadHCANode && r == deadRail) || r == f.RailDown {
				p.State, p.Usable, p.UnusableWhy = "DOWN", false, "port DOWN (phys_state Disabled)"
			}
			nodes[i].Ports = append(nodes[i].Ports, p)
		}
	}
	total := n * (n - 1) * rails
	cells := make([]matrix.Cell, 0, total)
	lats := make([]probe.Latency, total)
	bws := make([]probe.Bandwidth, total)
	portDown := func(dev, node string) *probe.Error {
		return &probe.Error{Class: probe.ClassPortDown, Verb: "ibv_open_device",
			Cause: fmt.Sprintf("%s port 1 on %s is DOWN", dev, node),
			Fix:   "check the cable and the switch port; ibstat should show State: Active"}
	}
	down := portDown(devs[DeadHCARail%rails], Name(DeadHCANode))
	// With a whole rail down, each cell blames its initiator's port: one
	// error per node, not per cell.
	var railDown []*probe.Error
	if f.RailDown >= 0 && f.RailDown < rails {
		railDown = make([]*probe.Error, n)
		for i := range railDown {
			railDown[i] = portDown(devs[f.RailDown], Name(i))
		}
	}
	lost := &probe.Error{Class: probe.ClassRetryExceeded, Verb: "ibv_poll_cq", WCStatus: 12,
		Cause: "packets to the peer were lost (transport retry counter exceeded)",
		Fix:   "check the cable, optics and switch port counters on the path"}
	for r := 0; r < rails; r++ {
		for s := 0; s < n; s++ {
			for d := 0; d < n; d++ {
				if s == d {
					continue
				}
				k := len(cells)
				jitter := noise(s, d, r) * 60
				lats[k] = probe.Latency{Samples: 1000, MinNs: 900 + jitter/2, P50Ns: 1000 + jitter,
					P90Ns: 1200 + jitter, P99Ns: 1500 + jitter, P999Ns: 2200 + jitter, MaxNs: 3000 + 10*jitter,
					StdevNs: 90}
				bws[k] = probe.Bandwidth{Gbps: 390 + jitter/20, MsgRate: 7e5, Bytes: 1 << 24, Duration: 0.01}
				c := matrix.Cell{Src: Name(s), Dst: Name(d), Rail: r, SrcDevice: devs[r], DstDevice: devs[r],
					Round: 1 + (s+d)%max(n-1, 1), Class: probe.ClassOK, Latency: &lats[k], Bandwidth: &bws[k]}
				switch {
				case r == f.RailDown:
					c.Class, c.Error, c.Latency, c.Bandwidth = probe.ClassPortDown, railDown[s], nil, nil
				case r == deadRail && (s == DeadHCANode || d == DeadHCANode):
					c.Class, c.Error, c.Latency, c.Bandwidth = probe.ClassPortDown, down, nil, nil
				case !f.Standard:
				case s == SlowNode || d == SlowNode:
					for _, p := range []*float64{&lats[k].P50Ns, &lats[k].P90Ns, &lats[k].P99Ns, &lats[k].P999Ns, &lats[k].MaxNs} {
						*p *= 4
					}
				case r == LowBWRail && (s/GroupSize == LowBWGroup) != (d/GroupSize == LowBWGroup):
					bws[k].Gbps /= 2
				case s == FlakySrc && d == FlakyDst:
					c.Retests = []matrix.Attempt{{Round: n, Class: probe.ClassOK, Latency: &lats[k], Bandwidth: &bws[k]}}
					c.Class, c.Error, c.Latency, c.Bandwidth = probe.ClassRetryExceeded, lost, nil, nil
				}
				cells = append(cells, c)
			}
		}
	}
	return nodes, cells
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
