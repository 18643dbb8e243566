package sweep

import (
	"reflect"
	"testing"

	"github.com/rdmamesh/rdmamesh/coordinator/linkplan"
	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// A confirmation pass names its pairs in either order: each keeps its
// steering, the labels following their nodes; a pair the plan does not
// have is tested on every rail.
func TestRetestsKeepTheirSteering(t *testing.T) {
	s := newSteering(Planned{Links: &linkplan.Plan{
		Pairs: []scheduler.Pair{{A: "n2", B: "n1"}},
		Steer: [][]scheduler.RailFlow{{{Rail: 0, A: 7, B: 9}, {Rail: 3, A: 11}}},
	}})
	rd := scheduler.Round{Pairs: []scheduler.Pair{{A: "n1", B: "n2"}, {A: "n3", B: "n4"}}}
	s.steer(&rd)
	want := [][]scheduler.RailFlow{{{Rail: 0, A: 9, B: 7}, {Rail: 3, B: 11}}, nil}
	if !reflect.DeepEqual(rd.Steer, want) {
		t.Fatalf("steer %v, want %v", rd.Steer, want)
	}
}

// Steered phases keep only their rails, each endpoint with its end's
// label, and both directions mirror each other.
func TestSteerPhases(t *testing.T) {
	ep := func(dev string, rail int) probe.Endpoint {
		return probe.Endpoint{Device: dev, Port: 1, GIDIndex: -1, Rail: rail}
	}
	fwd := [][]probe.RailPair{{{Rail: 0, Src: ep("a0", 0), Dst: ep("b0", 0)}, {Rail: 1, Src: ep("a1", 1), Dst: ep("b1", 1)}}}
	steer := []scheduler.RailFlow{{Rail: 1, A: 5, B: 6}}
	got := steerPhases(fwd, steer, false)
	if len(got) != 1 || len(got[0]) != 1 || got[0][0].Src.FlowLabel != 5 || got[0][0].Dst.FlowLabel != 6 || got[0][0].Src.Device != "a1" {
		t.Fatalf("forward: %+v", got)
	}
	if fwd[0][1].Src.FlowLabel != 0 {
		t.Fatal("the shared phases were written to")
	}
	back := steerPhases([][]probe.RailPair{{{Rail: 1, Src: ep("b1", 1), Dst: ep("a1", 1)}}}, steer, true)
	if back[0][0].Src.FlowLabel != 6 || back[0][0].Dst.FlowLabel != 5 {
		t.Fatalf("reverse: %+v", back)
	}
	if got := steerPhases(fwd, []scheduler.RailFlow{{Rail: 4}}, false); len(got) != 0 {
		t.Fatalf("no rail of the pair steered: %+v, want no phase", got)
	}
}
