package cluster

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/store"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/topology"
)

// The topology is raft state: every replica records the version a sweep
// ran on and names the same cable from its own copy of the log, and a
// leader elected after the first one's death routes the next sweep over
// the same version.
func TestTopologyIsReplicated(t *testing.T) {
	ft, err := topology.ParseFatTree("nodes=16,rails=2,leaf=4,spines=2")
	if err != nil {
		t.Fatal(err)
	}
	topo, err := ft.Generate()
	if err != nil {
		t.Fatal(err)
	}
	const cable = "leaf-r0-01:5~spine-r0-00:3"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := probe.DefaultTestParams()
	p.LatencyIters = 200
	cl, err := Start(ctx, Options{Nodes: 16, Rails: 2, Preset: "roce-2x100", Seed: 5, Faults: []string{"cable=" + cable + ":down"},
		Listen: "127.0.0.1:0", Mode: "full", Params: p, PairTimeout: 5 * time.Second, Coordinators: 3, Topology: topo,
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	version := store.TopologyVersion(topo)
	sweepOn := func(r *Replica) string {
		info, err := r.StartSweep(ctx, api.SweepRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range cl.Coords {
			if x.down {
				continue
			}
			wait.Within(t, 60*time.Second, "the sweep's end on "+x.Status().Name, func() bool {
				s, _ := x.Sweep(info.ID)
				return s.State == api.SweepDone
			})
			s, _ := x.Sweep(info.ID)
			m, _ := x.Matrix(info.ID)
			if s.Topology != version || len(m.Suspects) == 0 || m.Suspects[0].Kind != matrix.KindLink {
				t.Fatalf("%s: sweep ran on topology %q (want %s); suspects:\n%s", x.Status().Name, s.Topology, version, m.Summary())
			}
			if e := m.Suspects[0].Ends; !slices.Equal(e, []string{"leaf-r0-01:5", "spine-r0-00:3"}) && !slices.Equal(e, []string{"spine-r0-00:3", "leaf-r0-01:5"}) {
				t.Fatalf("%s names %v, want the cable %s", x.Status().Name, e, cable)
			}
		}
		return info.ID
	}
	leader := cl.Leader()
	sweepOn(leader)
	cl.KillReplica(leader)
	var next *Replica
	wait.Within(t, 15*time.Second, "a new leader", func() bool { next = cl.Leader(); return next != nil })
	sweepOn(next)
}
