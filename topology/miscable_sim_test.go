package topology_test

import (
	"errors"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/topology"
)

// An HCA cabled to another rail's leaf has no path to its rail's other
// HCAs: the simulated fabric fails those tests as a real one drops the
// packets, and passes the rest.
func TestMiscabledFabricLosesUnroutedTests(t *testing.T) {
	plan := tree(t, "nodes=8,rails=2,leaf=4,spines=2,oversub=2")
	cabled, _, err := topology.Miscable(plan, []string{"move=node-03/mlx5_0>leaf-r1-01:9"})
	if err != nil {
		t.Fatal(err)
	}
	fab, err := simFabric(t, cabled)
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{{"node-03", "node-01"}, {"node-01", "node-03"}, {"node-01", "node-06"}} {
		_, _, err := runTest(t, fab, pair[0], pair[1])
		var pe *probe.Error
		lost := errors.As(err, &pe) && pe.Class == probe.ClassRetryExceeded
		if want := pair[0] == "node-03" || pair[1] == "node-03"; lost != want {
			t.Errorf("%s -> %s on rail 0: %v, want lost %v", pair[0], pair[1], err, want)
		}
	}
}
