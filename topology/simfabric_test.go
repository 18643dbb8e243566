package topology_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/topology"
)

// The simulated fabric routes its tests over a topology; these tests sit
// here because internal/ packages import nothing above them.

func tree(tb testing.TB, spec string) *topology.Topology {
	tb.Helper()
	_, t, err := topology.GenerateFatTree(spec)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

func simFabric(tb testing.TB, topo *topology.Topology, specs ...string) (*sim.Fabric, error) {
	tb.Helper()
	fs, err := sim.ParseFaults(specs)
	if err != nil {
		tb.Fatal(err)
	}
	return sim.New(sim.Config{Preset: "roce-2x100", Seed: 1, Topology: topo, Faults: fs})
}

func TestLinkFaultsNeedTheirCable(t *testing.T) {
	topo := tree(t, "nodes=8,rails=2,leaf=4,spines=2")
	for spec, want := range map[string]string{
		"cable=leaf-r0-00:5~spine-r0-00:2:loss=2%": "no cable from leaf-r0-00:5 to spine-r0-00:2 (leaf-r0-00:5 has leaf-r0-00:5 <-> spine-r0-00:1)",
		"cable=leaf-r0-00~spine-r0-00:loss=2%":     "2 cables join them",
		"switch=spine-r9-00:down":                  `no switch "spine-r9-00"`,
	} {
		_, err := simFabric(t, topo, spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to say %q", spec, err, want)
		}
	}
}

// TestLinkFaultsHitTheirFlows: a dead cable or switch fails exactly the
// tests whose writes or replies the topology routes over it, by the
// source ports the QPs report.
func TestLinkFaultsHitTheirFlows(t *testing.T) {
	topo := tree(t, "nodes=16,rails=2,leaf=4,spines=2")
	names := topology.FatTree{Nodes: 16}.NodeNames()
	for _, fault := range []struct {
		spec, sw, from, to string
		oneWay             bool
	}{
		{"cable=leaf-r0-00:5~spine-r0-00:1:down", "", "leaf-r0-00:5", "spine-r0-00:1", false},
		{"switch=spine-r0-01:down", "spine-r0-01", "", "", false},
		{"cable=node-06/mlx5_0~leaf-r0-01:2:down", "", "node-06/mlx5_0", "leaf-r0-01:2", false},
		{"cable=leaf-r0-02:7>spine-r0-01:5:down", "", "leaf-r0-02:7", "spine-r0-01:5", true},
	} {
		fab, err := simFabric(t, topo, fault.spec)
		if err != nil {
			t.Fatal(err)
		}
		down, err := topo.TargetLinks(fault.sw, fault.from, fault.to, fault.oneWay)
		if err != nil {
			t.Fatal(err)
		}
		hit, miss := 0, 0
		for i, src := range names {
			for j, dst := range names {
				if i == j {
					continue
				}
				ini, resp, err := runTest(t, fab, src, dst)
				s, _ := topo.HCA(src, 0)
				d, _ := topo.HCA(dst, 0)
				crosses := false
				for _, l := range append(topo.AppendRoute(nil, s, d, uint32(ini.UDPSport), nil), topo.AppendRoute(nil, d, s, uint32(resp.UDPSport), nil)...) {
					for _, x := range down {
						crosses = crosses || l == x
					}
				}
				var pe *probe.Error
				failed := errors.As(err, &pe) && pe.Class == probe.ClassRetryExceeded
				if crosses != failed {
					t.Fatalf("%s: %s -> %s crosses the fault: %v, failed: %v (%v)", fault.spec, src, dst, crosses, failed, err)
				}
				if failed {
					hit++
				} else {
					miss++
				}
			}
		}
		if hit == 0 || miss == 0 {
			t.Errorf("%s: %d tests failed, %d passed; want some of each", fault.spec, hit, miss)
		}
	}
}

// runTest runs one rail-0 test as a worker pair does and returns its
// error and both QPs' infos.
func runTest(tb testing.TB, fab *sim.Fabric, src, dst string) (ini, resp probe.QPInfo, err error) {
	tb.Helper()
	ctx := context.Background()
	p := probe.TestParams{LatencySize: 8, LatencyIters: 50, BWSize: 65536, BWIters: 10, TxDepth: 16, Timeout: 5 * time.Second}
	ep := probe.Endpoint{Device: "mlx5_0", Port: 1, GIDIndex: -1}
	is, err := fab.Node(src).Open(ctx, ep, p)
	if err != nil {
		tb.Fatal(err)
	}
	defer is.Close()
	rs, err := fab.Node(dst).Open(ctx, ep, p)
	if err != nil {
		tb.Fatal(err)
	}
	defer rs.Close()
	ini, resp = is.Info(), rs.Info()
	if ini.UDPSport < 0xC000 || resp.UDPSport < 0xC000 {
		tb.Fatalf("source ports %#x, %#x outside rxe's 0xC000-0xFFFF", ini.UDPSport, resp.UDPSport)
	}
	if err := rs.Connect(ctx, ini); err != nil {
		tb.Fatal(err)
	}
	if err := is.Connect(ctx, resp); err != nil {
		tb.Fatal(err)
	}
	if _, err := is.Latency(ctx, p); err != nil {
		return ini, resp, err
	}
	_, err = is.Bandwidth(ctx, p)
	return ini, resp, err
}
