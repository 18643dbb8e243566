package sim_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// *sim.Node cannot be a fabric.Fabric by itself: its Open cannot name
// fabric.Session without importing worker. It is a fabric.Provider, which
// fabric.Adapt turns into one.
var (
	_ fabric.Session                = (*sim.Session)(nil)
	_ fabric.CMSession              = (*sim.Session)(nil) // RDMA CM mode sweeps run on the simulator too
	_ fabric.Provider[*sim.Session] = (*sim.Node)(nil)
	_ fabric.Fabric                 = fabric.Adapt((*sim.Node)(nil))
)

// TestThroughWorkerInterfaces drives a pair only through the worker's
// interfaces, as the worker will.
func TestThroughWorkerInterfaces(t *testing.T) {
	faults, err := sim.ParseFaults([]string{"node-02/mlx5_1:bw=0.5"})
	if err != nil {
		t.Fatal(err)
	}
	fab, err := sim.New(sim.Config{Preset: "roce-2x100", Seed: 1, Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	src, dst := fabric.Adapt(fab.Node("node-01")), fabric.Adapt(fab.Node("node-02"))
	if src.Name() != "sim" {
		t.Fatalf("Name = %q", src.Name())
	}
	ctx := context.Background()
	ports, err := dst.Ports(ctx)
	if err != nil || len(ports) != 2 {
		t.Fatalf("ports %v, %v", ports, err)
	}
	p := probe.DefaultTestParams()
	ep := probe.Endpoint{Device: ports[1].Device, Port: ports[1].Port, GIDIndex: -1, Rail: 1}
	ini, err := src.Open(ctx, ep, p)
	if err != nil {
		t.Fatal(err)
	}
	defer ini.Close()
	resp, err := dst.Open(ctx, ep, p)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Close()
	if err := resp.Connect(ctx, ini.Info()); err != nil {
		t.Fatal(err)
	}
	if err := ini.Connect(ctx, resp.Info()); err != nil {
		t.Fatal(err)
	}
	if _, err := ini.Latency(ctx, p); err != nil {
		t.Fatal(err)
	}
	bw, err := ini.Bandwidth(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if want := fab.Preset().ExpectedGbps(p.BWSize) / 2; bw.Gbps < 0.95*want || bw.Gbps > 1.05*want {
		t.Fatalf("bw=0.5 gave %.1f Gb/s, want ~%.1f", bw.Gbps, want)
	}
	// A failed Open must come back as a nil interface, not a typed nil.
	s, err := src.Open(ctx, probe.Endpoint{Device: "mlx5_9", Port: 1, GIDIndex: -1}, p)
	if err == nil || s != nil {
		t.Fatalf("Open on a missing device: %v, %v", s, err)
	}
}

func ExampleParseFault() {
	f, err := sim.ParseFault("node-05~node-07/mlx5_1:loss=30%,tail=20x")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(f.Nodes(), f.Device, f.Effects.Loss, f.Effects.Tail)
	_, err = sim.ParseFault("node-03:lsos=3")
	fmt.Println(err)
	// Output:
	// [node-05 node-06 node-07] mlx5_1 0.3 20
	// fault "node-03:lsos=3": unknown effect "lsos" (want down, dead, loss=P%, bw=F, lat=Nx, tail=Nx, mtu=N, gid=wrong; loss and bw take @egress or @ingress)
}
