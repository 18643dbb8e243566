package store

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// Figures must say what Fill says, for every slot: the same presence, class,
// round and figures, and Whole exactly for cells with an error or retests.
// A compact analysis of the grid then writes the JSON Build writes.
func TestGridFiguresMatchFill(t *testing.T) {
	var nodes []matrix.Node
	for i := 0; i < 4; i++ {
		n := matrix.Node{Name: fmt.Sprintf("n%d", 3-i), State: "alive"}
		for r := 0; r < 2; r++ {
			n.Ports = append(n.Ports, probe.Port{Device: fmt.Sprintf("mlx5_%d", r), Port: 1, Rail: r, State: "ACTIVE"})
		}
		nodes = append(nodes, n)
	}
	rec := newRecord(api.SweepInfo{ID: "s"}, wire.Spec{}, nodesIn(nodes))
	k := 0
	for _, a := range nodes {
		for _, b := range nodes {
			for r := 0; r < 2; r++ {
				if a.Name == b.Name || k%11 == 3 {
					k++
					continue
				}
				c := okCell(a.Name, b.Name, r)
				// Devices as the inventory names them: a cell that does
				// not match its nodes' ports is kept whole, off the grid.
				c.SrcDevice, c.DstDevice = a.Ports[r].Device, b.Ports[r].Device
				c.Round = k % 5
				c.Latency = &probe.Latency{Samples: 100, P50Ns: float64(1000 + 17*k), P99Ns: float64(2000 + 5*k)}
				switch k % 4 {
				case 1:
					c.Bandwidth = &probe.Bandwidth{Gbps: 300 + float64(k), MsgRate: 6e5}
				case 2:
					c.Class, c.Latency = probe.ClassRetryExceeded, nil
					c.Error = &probe.Error{Class: probe.ClassRetryExceeded, Cause: "lost", Fix: "check cables"}
				}
				rec.merge(cellIn(&c), false)
				k++
			}
		}
	}
	retest := okCell("n1", "n2", 1)
	retest.SrcDevice, retest.DstDevice = "mlx5_1", "mlx5_1"
	retest.Round = 9
	rec.merge(cellIn(&retest), true)
	grid := newGridSource(rec.Cells.freeze())
	compared := 0
	for s := range nodes {
		for d := range nodes {
			for r := 0; r < 3; r++ {
				var f matrix.Figures
				var c matrix.Cell
				okF, okC := grid.Figures(&f, s, d, r), grid.Fill(&c, s, d, r)
				if okF != okC {
					t.Fatalf("%d→%d rail %d: Figures says %v, Fill %v", s, d, r, okF, okC)
				}
				if !okC {
					continue
				}
				compared++
				want := matrix.Figures{Class: c.Class, Round: c.Round, Whole: c.Error != nil || len(c.Retests) > 0}
				if c.Latency != nil {
					want.Latency, want.P50Ns, want.P99Ns, want.Samples = true, c.Latency.P50Ns, c.Latency.P99Ns, c.Latency.Samples
				}
				if c.Bandwidth != nil {
					want.Bandwidth, want.Gbps, want.MsgRate = true, c.Bandwidth.Gbps, c.Bandwidth.MsgRate
				}
				// The code must stand for the very p50 (the analysis keeps
				// codes, not figures, while it judges).
				if f.P50Coded != f.Latency || f.P50Coded && grid.P50Table()[f.P50Code] != f.P50Ns {
					t.Fatalf("%d→%d rail %d: p50 %v coded %v as %d", s, d, r, f.P50Ns, f.P50Coded, f.P50Code)
				}
				f.P50Coded, f.P50Code = false, 0
				if f != want {
					t.Fatalf("%d→%d rail %d: Figures %+v, Fill gives %+v", s, d, r, f, want)
				}
			}
		}
	}
	if compared < k/2 {
		t.Fatalf("compared %d cells of the %d recorded: the grid lost them", compared, k)
	}
	th := matrix.DefaultThresholds()
	var built, compact bytes.Buffer
	if err := matrix.BuildFrom(nodes, grid, nil, th).WriteJSON(&built); err != nil {
		t.Fatal(err)
	}
	m := matrix.Analyse(nodes, newGridSource(rec.Cells.freeze()), nil, th)
	if err := m.WriteJSON(&compact); err != nil {
		t.Fatal(err)
	}
	if !m.Compact() || !bytes.Equal(built.Bytes(), compact.Bytes()) {
		t.Fatalf("the compact analysis of the grid writes other JSON (compact %v)", m.Compact())
	}
}
