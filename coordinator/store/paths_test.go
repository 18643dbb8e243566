package store

import (
	"reflect"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// A sweep's traced flows accumulate entry by entry, a flow traced again
// replacing its older trace; each entry changes the sweep's version (its
// analysis reads them), a snapshot keeps them, and they leave with their
// sweep.
func TestSweepPaths(t *testing.T) {
	f := New(2, nil)
	startSweep(t, f, "s1")
	v0, _ := f.Version("s1")
	first := wire.FlowPath{Src: "a", Dst: "b", Flow: 49441, Hops: []string{"10.0.0.1", "10.0.9.1"}}
	back := wire.FlowPath{Src: "a", Dst: "b", Back: true, Flow: 49441, Hops: []string{"", "10.0.9.1"}, Why: "hop 1 did not answer"}
	f.Apply(&raft.Log{Data: EncodePaths(&wire.SweepPaths{SweepID: "s1", Flows: []wire.FlowPath{first, back}})})
	again := first
	again.Hops = []string{"10.0.0.1", "10.0.8.1"}
	f.Apply(&raft.Log{Data: EncodePaths(&wire.SweepPaths{SweepID: "s1", Flows: []wire.FlowPath{again}})})
	f.Apply(&raft.Log{Data: EncodePaths(&wire.SweepPaths{SweepID: "gone", Flows: []wire.FlowPath{first}})})
	want := []wire.FlowPath{again, back}
	if got := f.Paths("s1"); !reflect.DeepEqual(got, want) {
		t.Fatalf("paths %+v, want %+v", got, want)
	}
	if v, _ := f.Version("s1"); v == v0 {
		t.Fatal("traced paths left the sweep's version as it was: its cached analysis would not see them")
	}
	g := New(2, nil)
	restoreInto(t, f, g)
	if got := g.Paths("s1"); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored paths %+v, want %+v", got, want)
	}
	startSweep(t, f, "s2")
	startSweep(t, f, "s3")
	if f.Paths("s1") != nil {
		t.Fatal("a dropped sweep's paths are still held")
	}
}
