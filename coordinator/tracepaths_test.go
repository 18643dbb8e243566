package coordinator

import (
	"fmt"
	"slices"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/topology"
)

// The trace phase picks the measured cells between leaves that carry a
// flow, the bad ones first; a cell within a leaf (one path), one without
// a flow (nothing to trace) or one never measured is not traced.
func TestPickTraceCells(t *testing.T) {
	ft, err := topology.ParseFatTree("nodes=12,rails=1,leaf=4,spines=2,oversub=2")
	if err != nil {
		t.Fatal(err)
	}
	topo, err := ft.Generate()
	if err != nil {
		t.Fatal(err)
	}
	names := ft.NodeNames()
	nodes := make([]matrix.Node, len(names))
	var cells []matrix.Cell
	for i, n := range names {
		nodes[i] = matrix.Node{Name: n, State: "alive", Ports: []probe.Port{{Device: "mlx5_0", Port: 1, Usable: true}}}
		for j, d := range names {
			if i == j {
				continue
			}
			c := okCell(n, d, 0)
			c.SrcDevice, c.DstDevice, c.Flow, c.BackFlow = "mlx5_0", "mlx5_0", uint16(0xC000+i*16+j), uint16(0xD000+i*16+j)
			switch {
			case i == 0 && j == 11:
				c.Class, c.Latency = probe.ClassRetryExceeded, nil
			case i == 1 && j == 11:
				c.Flow = 0
			case i == 2 && j == 11:
				c.Class, c.Latency = "", nil // never measured
			}
			cells = append(cells, c)
		}
	}
	m := matrix.AnalyseOn(topo, nodes, nil, cells, matrix.Thresholds{})
	got := pickTraceCells(m, topo)
	const want = 12*8 - 2 // between leaves, less the one without a flow and the untested one
	if len(got) != want {
		t.Fatalf("%d cells picked, want %d", len(got), want)
	}
	if got[0].src != names[0] || got[0].dst != names[11] {
		t.Fatalf("first pick %s -> %s, want the failed cell %s -> %s", got[0].src, got[0].dst, names[0], names[11])
	}
	for _, c := range got {
		if sameLeaf(t, topo, c.src, c.dst) {
			t.Fatalf("%s -> %s is within a leaf", c.src, c.dst)
		}
	}
}

func sameLeaf(t *testing.T, topo *topology.Topology, a, b string) bool {
	t.Helper()
	ha, ok1 := topo.HCA(a, 0)
	hb, ok2 := topo.HCA(b, 0)
	if !ok1 || !ok2 {
		t.Fatalf("no HCA for %s or %s", a, b)
	}
	return topo.LeafOf(ha) == topo.LeafOf(hb)
}

// A big sweep's good cells are sampled evenly: halving keeps every other,
// spread takes evenly spaced ones.
func TestTraceSampling(t *testing.T) {
	ks := []int{0, 1, 2, 3, 4, 5, 6, 7, 8}
	if got := halve(slices.Clone(ks)); !slices.Equal(got, []int{0, 2, 4, 6, 8}) {
		t.Fatalf("halve: %v", got)
	}
	if got := spread(ks, 3); !slices.Equal(got, []int{0, 3, 6}) {
		t.Fatalf("spread: %v", got)
	}
	if got := spread(ks, 20); len(got) != len(ks) {
		t.Fatal(fmt.Sprint("spread beyond the length: ", got))
	}
}
