package matrix

import (
	"fmt"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/topology"
)

// fixture is a healthy fabric to break on purpose: n nodes node-01.., each
// with `rails` ACTIVE ports mlx5_0.., and a full mesh of ok cells whose
// figures jitter deterministically, as real ones never tie.
type fixture struct {
	nodes []Node
	cells []Cell
}

func nodeName(i int) string { return fmt.Sprintf("node-%02d", i+1) }

// fixtureTree generates the fat tree spec over the fixture's node names.
func fixtureTree(t *testing.T, spec string) (topology.FatTree, *topology.Topology) {
	t.Helper()
	ft, err := topology.ParseFatTree(spec)
	if err != nil {
		t.Fatal(err)
	}
	ft.NodeName = nodeName
	topo, err := ft.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return ft, topo
}

func newFixture(n, rails int) *fixture {
	f := &fixture{}
	for i := 0; i < n; i++ {
		node := Node{Name: nodeName(i), State: "alive"}
		for r := 0; r < rails; r++ {
			node.Ports = append(node.Ports, probe.Port{
				Device: fmt.Sprintf("mlx5_%d", r), Port: 1, Rail: r, LinkLayer: "InfiniBand",
				State: "ACTIVE", RateGbps: 400, MTU: 4096, Usable: true,
			})
		}
		f.nodes = append(f.nodes, node)
	}
	for r := 0; r < rails; r++ {
		for s := 0; s < n; s++ {
			for d := 0; d < n; d++ {
				if s == d {
					continue
				}
				jitter := float64((s*7 + d*13 + r*5) % 60)
				f.cells = append(f.cells, Cell{
					Src: nodeName(s), Dst: nodeName(d), Rail: r,
					SrcDevice: fmt.Sprintf("mlx5_%d", r), DstDevice: fmt.Sprintf("mlx5_%d", r),
					Round: 1, Class: probe.ClassOK,
					Latency:   &probe.Latency{Samples: 1000, MinNs: 900, P50Ns: 1000 + jitter, P99Ns: 1500 + jitter, MaxNs: 3000},
					Bandwidth: &probe.Bandwidth{Gbps: 390 + jitter/20, MsgRate: 7e5, Bytes: 1 << 24, Duration: 0.01},
				})
			}
		}
	}
	return f
}

// touching applies fn to the cells of node on rail (AllRails: every rail).
func (f *fixture) touching(node string, rail int, fn func(c *Cell)) {
	for i := range f.cells {
		c := &f.cells[i]
		if (c.Src == node || c.Dst == node) && (rail == AllRails || c.Rail == rail) {
			fn(c)
		}
	}
}

func (f *fixture) cell(src, dst string, rail int) *Cell {
	for i := range f.cells {
		if c := &f.cells[i]; c.Src == src && c.Dst == dst && c.Rail == rail {
			return c
		}
	}
	panic("no cell " + src + " -> " + dst)
}

func (f *fixture) drop(pred func(c *Cell) bool) {
	kept := f.cells[:0]
	for _, c := range f.cells {
		if !pred(&c) {
			kept = append(kept, c)
		}
	}
	f.cells = kept
}

func (f *fixture) build() *Matrix { return Build(f.nodes, f.cells, DefaultThresholds()) }

func fail(class probe.Class, cause, fix string) func(c *Cell) {
	return func(c *Cell) {
		c.Class = class
		c.Error = &probe.Error{Class: class, Cause: cause, Fix: fix}
		c.Latency, c.Bandwidth = nil, nil
	}
}

func slow(factor float64) func(c *Cell) {
	return func(c *Cell) {
		if c.Latency == nil {
			return // a failed cell stays failed
		}
		l := *c.Latency
		l.P50Ns *= factor
		c.Latency = &l
	}
}
