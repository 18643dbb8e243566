package metrics

import (
	"fmt"
	"slices"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// TestResultCompactEqualsMaterialised: the result metrics read a compact
// matrix through its figures and a materialised one through Cells; both
// must give every series and value alike, including the device of an HCA
// the inventory does not list (read from its cells) and a cell whose
// latency has no sample count (a compact source may not keep it).
func TestResultCompactEqualsMaterialised(t *testing.T) {
	f := standardFabric()
	f.nodes[3].Ports = nil // n4 without inventory: its devices come from its cells
	f.cell("n1", "n3", 1).Latency = &probe.Latency{P50Ns: 70000}
	compact := f.build()
	if !compact.Compact() {
		t.Fatal("the fixture is not compact")
	}
	lines := func(m *matrix.Matrix) []string {
		var out []string
		add := func(d *def, v float64, labels ...string) {
			out = append(out, fmt.Sprint(d.Name, labels, v))
		}
		resultSummary(add, api.SweepInfo{ID: "s1"}, m, CoordinatorOptions{WorstPairs: 3, TopSuspects: 5})
		slices.Sort(out)
		return out
	}
	got, want := lines(compact), lines(compact.Materialize())
	if !slices.Equal(got, want) {
		t.Fatalf("compact:\n%v\nmaterialised:\n%v", got, want)
	}
	if !slices.Contains(got, "rdmamesh_hca_cells[n4 mlx5_1 1] 6") {
		t.Errorf("n4's rail-1 HCA not named from its cells:\n%v", got)
	}
	if !slices.Contains(got, "rdmamesh_pair_latency_p50_seconds[n1 n3 1] 7e-05") {
		t.Errorf("the slowest cell, its latency without a sample count, is not a worst pair:\n%v", got)
	}
}
