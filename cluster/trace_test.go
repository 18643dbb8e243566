package cluster

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/topology"
)

// TraceCell asks the cell's initiator to trace the test's flow. Without a
// topology the simulated fabric has no hops to answer with, and the
// coordinator passes the reason on instead of inventing a path; a cell
// the sweep lacks is refused before any worker is asked.
func TestTraceCellAsksTheInitiator(t *testing.T) {
	cl := startSweepDefaults(t, 4, coordinator.SweepDefaults{})
	info, m := sweepWith(t, cl, api.SweepRequest{Mode: "quick"})
	c := m.Cells[0]
	if c.Flow == 0 {
		t.Fatalf("cell %s -> %s has no flow", c.Src, c.Dst)
	}
	_, err := cl.Coord.TraceCell(context.Background(), info.ID, api.TraceRequest{Src: c.Src, Dst: c.Dst, Rail: c.Rail})
	var un interface{ Unavailable() bool }
	if !errors.As(err, &un) || !strings.Contains(err.Error(), "tracing from "+c.Src) {
		t.Fatalf("trace from a simulated worker: %v", err)
	}
	t.Logf("the worker's answer: %v", err)
	_, err = cl.Coord.TraceCell(context.Background(), info.ID, api.TraceRequest{Src: c.Src, Dst: "nobody", Rail: 0})
	var fe interface{ Field() string }
	if !errors.As(err, &fe) || fe.Field() != "src" || !strings.Contains(err.Error(), "has no cell") {
		t.Fatalf("a cell the sweep lacks: %v", err)
	}
}

// Two cables between a leaf and a spine: a trace names the switches it
// crossed, not which of the two cables, so no traced flow maps and the
// cells are routed by the model, which still names the down cable.
func TestSweepParallelCablesFallBackToTheModel(t *testing.T) {
	cl := startTraced(t, "nodes=12,rails=1,leaf=4,spines=2,addrs=10.255.0.0/24", "cable=leaf-r0-00:5>spine-r0-00:1:down")
	info, m := sweepWith(t, cl, api.SweepRequest{Retests: new(int)})
	sp, _ := cl.Coord.SweepPaths(info.ID)
	if len(sp) == 0 || !strings.Contains(sp[0].LinksUnknown, "cables join") {
		t.Fatalf("paths over parallel cables: %+v", sp[:min(len(sp), 1)])
	}
	if len(m.Suspects) == 0 || m.Suspects[0].Kind != matrix.KindLink || !slices.Equal(m.Suspects[0].Ends, []string{"leaf-r0-00:5", "spine-r0-00:1"}) {
		t.Fatalf("want the cable leaf-r0-00:5 -> spine-r0-00:1 named by the model:\n%s", m.Summary())
	}
}

// oneCablePerSpine is 12 nodes on 3 leaves of 4 and 2 spines, one rail,
// one cable from each leaf to each spine, switches with addresses.
const oneCablePerSpine = "nodes=12,rails=1,leaf=4,spines=2,oversub=2,addrs=10.255.0.0/24"

// startTraced is a 12-node cluster on the fat tree spec whose switches
// have addresses: its sweeps trace their flows.
func startTraced(t *testing.T, spec string, faults ...string) *Cluster {
	t.Helper()
	return startSeeded(t, spec, 0, faults...)
}

// startSeeded is startTraced on switches whose ECMP hash is seeded
// (Options.HashSeed): not the topology's model.
func startSeeded(t *testing.T, spec string, seed uint32, faults ...string) *Cluster {
	t.Helper()
	return startOn(t, spec, Options{HashSeed: seed, Faults: faults})
}

// startOn is a cluster of as many nodes as the fat tree spec has, with
// o's HashSeed, Faults, LossProbes, SwappedCables, Miscabled and Rails (0: 1).
func startOn(t *testing.T, spec string, o Options) *Cluster {
	t.Helper()
	ft, topo, err := topology.GenerateFatTree(spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := probe.DefaultTestParams()
	p.LatencyIters = 200
	cl, err := Start(ctx, Options{Nodes: ft.Nodes, Rails: max(o.Rails, 1), Preset: "roce-2x100", Seed: 3, Faults: o.Faults,
		Listen: "127.0.0.1:0", Mode: "full", Params: p, PairTimeout: 5 * time.Second, Topology: topo, HashSeed: o.HashSeed, LossProbes: o.LossProbes,
		SwappedCables: o.SwappedCables, Miscabled: o.Miscabled, Live: o.Live, Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	return cl
}

// A cable whose routes were withdrawn fails nothing, as ECMP carries its
// flows over its siblings; the traced paths show it unused, a warning.
func TestSweepReportsWithdrawnCable(t *testing.T) {
	cl := startTraced(t, oneCablePerSpine, "cable=leaf-r0-00~spine-r0-01:withdrawn")
	_, m := sweepWith(t, cl, api.SweepRequest{})
	if m.Outcome() != matrix.OutcomePass {
		t.Fatalf("outcome %s, want pass:\n%s", m.Outcome(), m.Summary())
	}
	found := false
	for _, w := range m.Warnings {
		found = found || w.Kind == matrix.WarnLinkUnused && strings.HasPrefix(w.Link, "leaf-r0-00:") && strings.Contains(w.Link, " <-> spine-r0-01:")
	}
	if !found {
		t.Fatalf("no link-unused warning for leaf-r0-00 <-> spine-r0-01:\n%s", m.Summary())
	}
}

// A sweep on a RoCE topology whose switches have addresses ends with its
// flows traced: every cell between leaves has its data flow traced by its
// initiator and its responder's by its target, the hops map onto the
// tree, and the lossy link one way is named from the traced paths.
func TestSweepTracesItsPaths(t *testing.T) {
	cl := startTraced(t, oneCablePerSpine, "cable=leaf-r0-00>spine-r0-01:down")
	info, m := sweepWith(t, cl, api.SweepRequest{Retests: new(int)})
	paths := cl.Coord.Paths(info.ID)
	const cross = 12 * 8 // ordered pairs on different leaves
	if len(paths) != 2*cross {
		t.Fatalf("%d traced flows, want %d (both flows of the %d cells between leaves)", len(paths), 2*cross, cross)
	}
	for _, f := range paths {
		if len(f.Hops) != 3 || f.Hops[0] == "" || f.Hops[1] == "" || f.Hops[2] == "" {
			t.Fatalf("flow %s -> %s (back %v) traced %q: %s; want leaf, spine, leaf", f.Src, f.Dst, f.Back, f.Hops, f.Why)
		}
	}
	sp, ok := cl.Coord.SweepPaths(info.ID)
	if !ok || len(sp) != len(paths) || len(sp[0].Links) != 4 || sp[0].LinksUnknown != "" {
		t.Fatalf("the paths served: %+v", sp[:min(len(sp), 1)])
	}
	if len(m.Suspects) == 0 || m.Suspects[0].Kind != matrix.KindLink || m.Suspects[0].Direction != "one-way" ||
		!strings.HasPrefix(m.Suspects[0].Ends[0], "leaf-r0-00:") || !strings.HasPrefix(m.Suspects[0].Ends[1], "spine-r0-01:") {
		t.Fatalf("want the link leaf-r0-00 -> spine-r0-01 named one way:\n%s", m.Summary())
	}
}
