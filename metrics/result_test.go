package metrics

import (
	"context"
	"fmt"
	"math/rand/v2"
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
		if err := resultSummary(context.Background(), add, api.SweepInfo{ID: "s1"}, m, CoordinatorOptions{WorstPairs: 3, TopSuspects: 5}); err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
	got, want := lines(compact), lines(compact.Materialize())
	if !slices.Equal(got, want) {
		t.Fatalf("compact:\n%v\nmaterialised:\n%v", got, want)
	}
	// The same walk split over the cores, as a large sweep's is: the
	// parts' counts, HCAs and worst pairs merge to the same series.
	defer func(n, p int) { splitCells, splitParts = n, p }(splitCells, splitParts)
	splitCells = 1
	for _, splitParts = range []int{2, 3, 7} { // by source: 7 parts of 4 sources leave some empty
		if split := lines(compact); !slices.Equal(split, want) {
			t.Fatalf("compact, walked in %d parts:\n%v\nmaterialised:\n%v", splitParts, split, want)
		}
	}
	if !slices.Contains(got, "rdmamesh_hca_cells[n4 mlx5_1 1] 6") {
		t.Errorf("n4's rail-1 HCA not named from its cells:\n%v", got)
	}
	if !slices.Contains(got, "rdmamesh_pair_latency_p50_seconds[n1 n3 1] 7e-05") {
		t.Errorf("the slowest cell, its latency without a sample count, is not a worst pair:\n%v", got)
	}
}

// A part that meets an HCA only in untested cells (no device, and the
// node lists no inventory) leaves its device to a later part that measured
// it: the merge keeps the first device any part found, as one walk does.
func TestResultMergeTakesADeviceALaterPartFound(t *testing.T) {
	f := standardFabric()
	f.nodes[3].Ports = nil // n4: its devices come from its cells
	var kept []matrix.Cell
	for _, c := range f.cells {
		if c.Dst == "n4" && (c.Src == "n1" || c.Src == "n2") {
			continue // untested: the analysis fills them in without devices
		}
		kept = append(kept, c)
	}
	f.cells = kept
	compact := f.build()
	lines := func(m *matrix.Matrix) []string {
		var out []string
		add := func(d *def, v float64, labels ...string) { out = append(out, fmt.Sprint(d.Name, labels, v)) }
		if err := resultSummary(context.Background(), add, api.SweepInfo{ID: "s1"}, m, CoordinatorOptions{}); err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
	want := lines(compact.Materialize())
	defer func(n, p int) { splitCells, splitParts = n, p }(splitCells, splitParts)
	splitCells, splitParts = 1, 2 // n1, n2 | n3, n4
	if got := lines(compact); !slices.Equal(got, want) {
		t.Fatalf("walked in two parts:\n%v\nmaterialised:\n%v", got, want)
	}
	if !slices.Contains(want, "rdmamesh_hca_cells[n4 mlx5_0 0] 6") {
		t.Fatalf("n4's rail-0 HCA is not named from its measured cells:\n%v", want)
	}
}

// TestWorstKeepsTheFirstK: worst turns candidates away below its cut, yet
// keeps exactly the first k of everything offered in its order, with ties
// on the figure broken by rail and names as a full sort breaks them.
func TestWorstKeepsTheFirstK(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, k := range []int{1, 3, 10} {
		for run := range 20 {
			lat, bw := worst{by: byLatency}, worst{by: byBandwidth, narrow: true}
			var all []pairFigure
			for range rng.IntN(2000) + 1 {
				// Few distinct figures: ties at the cut are the rule.
				c := pairFigure{rail: rng.IntN(4), src: fmt.Sprint("n", rng.IntN(30)), dst: fmt.Sprint("n", rng.IntN(30)),
					p50: float64(1000 + rng.IntN(6)), bw: float64(100 + rng.IntN(6))}
				if slices.ContainsFunc(all, func(x pairFigure) bool { return pairOrder(x, c) == 0 }) {
					continue // a pair and rail is offered once per walk
				}
				all = append(all, c)
				lat.offer(c, k)
				bw.offer(c, k)
			}
			for _, tc := range []struct {
				w  worst
				by func(a, b pairFigure) int
			}{{lat, byLatency}, {bw, byBandwidth}} {
				want := slices.Clone(all)
				slices.SortFunc(want, tc.by)
				got := slices.Clone(tc.w.xs)
				slices.SortFunc(got, tc.by)
				want, got = want[:min(k, len(want))], got[:min(k, len(got))]
				if !slices.Equal(got, want) {
					t.Fatalf("k %d run %d: kept %v, want %v", k, run, got, want)
				}
			}
		}
	}
}
