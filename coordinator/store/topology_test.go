package store

import (
	"slices"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/topology"
)

func fatTree(t *testing.T, spec string) *topology.Topology {
	t.Helper()
	_, topo, err := topology.GenerateFatTree(spec)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func applyTopology(f *FSM, t *topology.Topology) string {
	b, v := EncodeTopology(t)
	f.Apply(&raft.Log{Data: b})
	return v
}

func startSweep(t *testing.T, f *FSM, id string) {
	t.Helper()
	f.Apply(entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: id, State: api.SweepRunning}}))
}

func sweepTopology(f *FSM, id string) string {
	info, _ := f.Info(id)
	return info.Topology
}

// Each sweep keeps the topology it started on: a newer one changes what the
// next sweeps route over, not how an older sweep is judged; a version no
// kept sweep ran on is dropped with the sweep.
func TestSweepsKeepTheirTopology(t *testing.T) {
	small, big := fatTree(t, "nodes=8,rails=2,leaf=4,spines=2"), fatTree(t, "nodes=16,rails=2,leaf=4,spines=2")
	f := New(2, nil)
	startSweep(t, f, "s0")
	v1 := applyTopology(f, small)
	startSweep(t, f, "s1")
	v2 := applyTopology(f, big)
	startSweep(t, f, "s2")
	if v1 == v2 || len(v1) != 16 {
		t.Fatalf("versions %q and %q: want two different 16-digit digests", v1, v2)
	}
	if got := [...]string{sweepTopology(f, "s1"), sweepTopology(f, "s2")}; got != [...]string{v1, v2} {
		t.Fatalf("sweeps ran on %v, want [%s %s]", got, v1, v2)
	}
	if f.Topology(v1) == nil || len(f.Topology(v1).HCAs) != 16 || len(f.Topology(v2).HCAs) != 32 {
		t.Fatal("a kept sweep's topology is not the one committed for it")
	}
	if cur, v := f.CurrentTopology(); v != v2 || cur != f.Topology(v2) {
		t.Fatalf("current %s, want %s", v, v2)
	}
	startSweep(t, f, "s3") // s1 leaves: nothing kept ran on v1
	if f.Topology(v1) != nil {
		t.Fatal("a topology no kept sweep ran on is still held")
	}
	if again := applyTopology(f, big); again != v2 || TopologyVersion(big) != v2 {
		t.Fatalf("the same topology committed again is version %s, was %s", again, v2)
	}
}

// A snapshot carries the topologies and which sweep ran on which, and the
// restored model routes as the committed one does.
func TestTopologySnapshot(t *testing.T) {
	for _, spec := range []string{"nodes=16,rails=2,leaf=4,spines=2", "nodes=32,rails=2,leaf=4,spines=2,pods=2,cores=4,ll=ib"} {
		topo := fatTree(t, spec)
		f := New(3, nil)
		startSweep(t, f, "before")
		v := applyTopology(f, topo)
		startSweep(t, f, "after")
		g := New(3, nil)
		restoreInto(t, f, g)
		if sweepTopology(g, "before") != "" || sweepTopology(g, "after") != v {
			t.Fatalf("%s: restored sweeps ran on %q and %q, want \"\" and %s", spec, sweepTopology(g, "before"), sweepTopology(g, "after"), v)
		}
		got, cur := g.CurrentTopology()
		if cur != v || got == nil || TopologyVersion(got) != v {
			t.Fatalf("%s: restored current topology %s, want %s", spec, cur, v)
		}
		for src := range topo.HCAs {
			for _, dst := range []int{0, len(topo.HCAs) - 1} {
				a, _ := topo.Route(nil, src, dst, 0xC123)
				b, _ := got.Route(nil, src, dst, 0xC123)
				if !slices.Equal(a, b) {
					t.Fatalf("%s: HCA %d -> %d routes %v before the snapshot, %v after", spec, src, dst, a, b)
				}
			}
		}
	}
	f, g := New(1, nil), New(1, nil)
	startSweep(t, f, "s")
	restoreInto(t, f, g)
	if topo, v := g.CurrentTopology(); topo != nil || v != "" {
		t.Fatalf("a snapshot without topologies restored one: %s", v)
	}
}
