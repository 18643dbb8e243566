package cabling

import (
	"slices"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/topology"
)

// With no switch tables read, a cable between switches is seen only by
// the traced paths that cross it: where the plan has one cable between
// two switches a path names one after the other, that cable is there
// (ok, its ports unconfirmed); two switches the plan does not join, one
// after the other in a path, are a cable the plan lacks.
func TestPathsSeeSwitchCables(t *testing.T) {
	_, topo, err := topology.GenerateFatTree("nodes=8,rails=1,leaf=4,spines=2,oversub=2")
	if err != nil {
		t.Fatal(err)
	}
	obs := Observe(topo, swp)
	obs.Switches = nil
	obs.Paths = []Path{
		{SrcNode: "node-01", DstNode: "node-05", Hops: []string{"leaf-r0-00", "spine-r0-00", "leaf-r0-01"}},
		{SrcNode: "node-02", DstNode: "node-06", Hops: []string{"leaf-r0-00", "leaf-r0-01"}},
	}
	r := Check(topo, obs)
	verdict := map[string]Verdict{}
	for _, f := range r.Ports {
		verdict[f.End] = f.Verdict
	}
	up := func(leaf, spine string) string {
		for _, it := range r.Ports {
			if strings.HasPrefix(it.End, leaf+":") && strings.HasPrefix(it.Expected, spine+":") {
				return it.End
			}
		}
		t.Fatalf("no finding for the cable %s - %s", leaf, spine)
		return ""
	}
	for _, c := range []struct {
		leaf, spine string
		want        Verdict
	}{
		{"leaf-r0-00", "spine-r0-00", OK}, {"leaf-r0-01", "spine-r0-00", OK},
		{"leaf-r0-00", "spine-r0-01", NoEvidence}, {"leaf-r0-01", "spine-r0-01", NoEvidence},
	} {
		if got := verdict[up(c.leaf, c.spine)]; got != c.want {
			t.Errorf("%s - %s: %s, want %s", c.leaf, c.spine, got, c.want)
		}
	}
	want := []string{"leaf-r0-00 unexpected leaf-r0-01"}
	var got []string
	for _, f := range r.Findings() {
		if f.Verdict != NoEvidence {
			got = append(got, f.End+" "+string(f.Verdict)+" "+f.Found)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
}
