package synth

import (
	"reflect"
	"testing"

	"github.com/rdmamesh/rdmamesh/matrix"
)

// TestSourceMatchesFabric: the 4,096-node benchmark analyses a Source, the
// tests a []Cell; both must be the same sweep, faults and all.
func TestSourceMatchesFabric(t *testing.T) {
	for _, f := range []Faults{StandardFaults, NoFaults, {DeadHCA: true, RailDown: -1}, {RailDown: 2}} {
		nodes, cells := FabricWith(48, 4, f)
		want := matrix.Build(nodes, cells, matrix.DefaultThresholds())
		got := MatrixFrom(48, 4, f).Materialize()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%+v: the Source's matrix differs from the cells' (healthy %v/%v, counts %v/%v, %d/%d suspects)",
				f, got.Healthy, want.Healthy, got.Counts, want.Counts, len(got.Suspects), len(want.Suspects))
		}
		if len(want.Suspects) == 0 && f.Standard {
			t.Fatal("the standard faults made no suspects: the comparison compares nothing")
		}
	}
}

func BenchmarkFigures(b *testing.B) {
	_, src := SourceWith(1024, 8, StandardFaults)
	var f matrix.Figures
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		src.Figures(&f, i%1024, (i+1)%1024, i%8)
	}
}
