package coordinator

import (
	"fmt"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/coordinator/store"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

func entry(t *testing.T, typ store.EntryType, v any) *raft.Log {
	t.Helper()
	b, err := store.EncodeEntry(typ, v)
	if err != nil {
		t.Fatal(err)
	}
	return &raft.Log{Index: 1, Data: b}
}

func okCell(src, dst string, rail int) matrix.Cell {
	return matrix.Cell{Src: src, Dst: dst, Rail: rail, Class: probe.ClassOK, Latency: &probe.Latency{P50Ns: 1000}}
}

// benchSweep is an all-pairs sweep of n nodes with 8 usable rails each.
func benchSweep(b *testing.B, n int) ([]matrix.Node, []scheduler.Round) {
	nodes := make([]matrix.Node, n)
	names := make([]string, n)
	for i := range nodes {
		nodes[i].Name = fmt.Sprintf("n%03d", i)
		names[i] = nodes[i].Name
		for r := 0; r < 8; r++ {
			nodes[i].Ports = append(nodes[i].Ports, probe.Port{Device: fmt.Sprintf("mlx5_%d", r), Port: 1, Rail: r, Usable: true})
		}
	}
	rounds, err := scheduler.AllPairs(names)
	if err != nil {
		b.Fatal(err)
	}
	return nodes, rounds
}
