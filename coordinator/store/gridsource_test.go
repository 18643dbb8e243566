package store

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// The analysis reads the store through GridSource; it must give exactly the
// matrix that decoding every cell into a slice gives: grid cells with and
// without figures, failures, retests, a gap, cross-rail and outside cells
// kept whole, and nodes recorded out of name order.
func TestGridSourceMatchesDecodedCells(t *testing.T) {
	var nodes []matrix.Node
	for _, i := range []int{3, 1, 4, 0, 2} {
		n := matrix.Node{Name: fmt.Sprintf("n%d", i), State: "alive"}
		for r := 0; r < 2; r++ {
			n.Ports = append(n.Ports, probe.Port{Device: fmt.Sprintf("mlx5_%d", r), Port: 1, Rail: r, State: "ACTIVE"})
		}
		nodes = append(nodes, n)
	}
	rec := newRecord(api.SweepInfo{ID: "s"}, wire.Spec{}, nodesIn(nodes))
	round := 0
	for _, a := range nodes {
		for _, b := range nodes {
			for r := 0; r < 2; r++ {
				if a.Name == b.Name || a.Name == "n2" && b.Name == "n0" && r == 1 { // a gap
					continue
				}
				c := okCell(a.Name, b.Name, r)
				c.Round = round % 7
				c.SrcDevice, c.DstDevice = fmt.Sprintf("mlx5_%d", r), fmt.Sprintf("mlx5_%d", r)
				c.Latency = &probe.Latency{Samples: 1000, P50Ns: float64(1000 + 37*round%200), P99Ns: 2500}
				switch {
				case a.Name == "n4" && r == 0:
					c.Class, c.Latency = probe.ClassPortDown, nil
					c.Error = &probe.Error{Class: probe.ClassPortDown, Cause: "down", Fix: "ip link set up"}
				case round%5 == 0:
					c.Bandwidth = &probe.Bandwidth{Gbps: 390 + float64(round%9), Bytes: 1 << 30}
				}
				rec.merge(cellIn(&c), false)
				round++
			}
		}
	}
	retest := okCell("n4", "n1", 0)
	retest.Round, retest.SrcDevice, retest.DstDevice = 9, "mlx5_0", "mlx5_0"
	rec.merge(cellIn(&retest), true)
	zero := 0
	rec.merge(cellIn(&matrix.Cell{Src: "n1", Dst: "n3", Rail: 1, DstRail: &zero, Class: probe.ClassOK, Latency: &probe.Latency{P50Ns: 1200}}), false)
	rec.merge(cellIn(&matrix.Cell{Src: "n9", Dst: "n1", Rail: 0, Class: probe.ClassOK}), false)

	th := matrix.DefaultThresholds()
	grid := newGridSource(rec.Cells.freeze())
	if len(grid.ExtraCells()) != 2 {
		t.Fatalf("%d cells kept whole, want the cross-rail and the outside one", len(grid.ExtraCells()))
	}
	view := rec.Cells.freeze()
	want := matrix.Build(nodes, view.cells(), th)
	got := matrix.BuildFrom(nodes, grid, grid.ExtraCells(), th)
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("matrix from the grid differs:\n%s\n%s", want.Summary(), got.Summary())
	}
	if got.Counts[matrix.VerdictUntested] != 1 || len(got.Cross) != 1 || got.Ignored != 1 || got.Healthy {
		t.Fatalf("counts %v, cross %d, ignored %d: the fixture lost its edge cases", got.Counts, len(got.Cross), got.Ignored)
	}
}
