package coordinator

import (
	"testing"

	"github.com/rdmamesh/rdmamesh/topology"
)

// Without a group label, live members are grouped by their leaf in the
// topology, so leaf mates probe each other (and weigh on their cables).
func TestLeafGroupFromTheTopology(t *testing.T) {
	_, topo, err := topology.GenerateFatTree("nodes=8,rails=2,leaf=4,spines=2")
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := leafGroup(topo, "node-01", 0), leafGroup(topo, "node-04", 0), leafGroup(topo, "node-05", 0)
	if a == "" || a != b || a == c {
		t.Errorf("node-01 in %q, node-04 in %q, node-05 in %q: want the first two on one leaf, the third on another", a, b, c)
	}
	if g := leafGroup(topo, "nobody", 0); g != "" {
		t.Errorf("a node the topology lacks: group %q", g)
	}
}
