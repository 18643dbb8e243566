package store

import (
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// A sweep's record keeps no LLDP neighbours (the live inventory reports
// them), and leaving them out does not touch the caller's nodes.
func TestSweepRecordsNoNeighbors(t *testing.T) {
	nb := &probe.Neighbor{SystemName: "leaf1", PortID: "dtap1"}
	nodes := []matrix.Node{{Name: "a", Ports: []probe.Port{{Device: "rxe0", Neighbor: nb}}}, {Name: "b", Ports: []probe.Port{{Device: "rxe0"}}}}
	f := New(1, nil)
	f.Apply(entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s", State: api.SweepRunning}, Nodes: nodes}))
	v, ok := f.Meta("s")
	if !ok || len(v.Nodes) != 2 || v.Nodes[0].Ports[0].Device != "rxe0" || v.Nodes[0].Ports[0].Neighbor != nil {
		t.Fatalf("recorded nodes %+v", v.Nodes)
	}
	if nodes[0].Ports[0].Neighbor != nb {
		t.Fatal("the caller's port lost its neighbour")
	}
}
