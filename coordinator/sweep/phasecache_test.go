package sweep

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// The phases a sweep run shares between pairs of the same layouts are
// the phases planned for the pair itself: across rail modes, rail
// selections, port counts, devices, GID indices, and more layouts than
// are remembered; asked again, a remembered plan is the same one.
func TestPhaseCacheGivesEachPairsPhases(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var nodes []matrix.Node
	for i := range 60 {
		n := matrix.Node{Name: fmt.Sprintf("n%02d", i)}
		ports := 8
		if i%5 == 0 {
			ports = 2 + rng.IntN(7)
		}
		for r := range ports {
			gid := 3
			if i%7 == 0 {
				gid = rng.IntN(30) // many layouts: more than are remembered
			}
			n.Ports = append(n.Ports, probe.Port{Device: fmt.Sprintf("mlx5_%d", r+i%3), Port: 1, GIDIndex: gid, Rail: r, Usable: true})
		}
		nodes = append(nodes, n)
	}
	ns := NewNodes(nodes)
	layouts, none := map[int]bool{}, 0
	for _, r := range ns.byName {
		layouts[r.layout] = true
		if r.layout < 0 {
			none++
		}
	}
	if none == 0 || len(layouts) < maxLayouts {
		t.Fatalf("%d layouts, %d nodes without one: the test must pass maxLayouts", len(layouts), none)
	}
	// Two specs of one rail mode side by side: their rails tell them apart.
	for _, spec := range []Spec{{RailMode: "same"}, {RailMode: "same", Rails: []int{1, 3, 5}}, {RailMode: "cross"}, {RailMode: "all"}, {}} {
		pc := ns.phaseCache(&spec)
		for range 400 {
			a, b := ns.byName[nodes[rng.IntN(len(nodes))].Name], ns.byName[nodes[rng.IntN(len(nodes))].Name]
			var pb phaseBuf
			got, want := pc.phases(&pb, &spec, a, b), railPhases(&phaseBuf{}, spec, a, b)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("spec %+v, %s (layout %d) > %s (layout %d):\n got %v\nwant %v", spec, a.Name, a.layout, b.Name, b.layout, got, want)
			}
			if again := pc.phases(&pb, &spec, a, b); a.layout >= 0 && b.layout >= 0 && len(got) > 0 && &again[0][0] != &got[0][0] {
				t.Fatalf("%s > %s planned again", a.Name, b.Name)
			}
		}
	}
	if ns.phaseCache(&Spec{RailMode: "same"}) == ns.phaseCache(&Spec{RailMode: "cross"}) {
		t.Fatal("one cache for two rail modes")
	}
}
