package matrix

import (
	"fmt"
	"math/rand"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// demoFabric is what `rdmamesh demo` measures by default: 16 nodes with
// two 100 GbE RoCE v2 HCAs each (the simulator's roce-2x100 preset: GID
// index 3, a netdev and an address a port), about 1.6 µs and 97 Gb/s a
// healthy pair. The sim itself stays out of matrix's tests; these are its
// figures and wording.
func demoFabric() *fixture {
	f := newFixture(16, 2)
	for i := range f.nodes {
		for r := range f.nodes[i].Ports {
			p := &f.nodes[i].Ports[r]
			p.LinkLayer, p.RateGbps, p.GIDIndex, p.GIDType = "Ethernet", 100, 3, "RoCE v2"
			p.Netdev, p.IP = fmt.Sprintf("ens%df0", r+1), fmt.Sprintf("10.%d.0.%d", r, i+1)
		}
	}
	for i := range f.cells {
		c := &f.cells[i]
		l, b := *c.Latency, *c.Bandwidth
		jitter := l.P50Ns - 1000
		l.MinNs, l.P50Ns, l.P99Ns, l.MaxNs = 1500, 1600+jitter, 2300+jitter, 4800
		b.Gbps, b.MsgRate = 97+jitter/60, 185e3
		c.Latency, c.Bandwidth = &l, &b
	}
	return f
}

// demoCase is one of the demo's --fault specs, applied as the simulator
// applies it.
type demoCase struct {
	name   string
	spec   string // the demo's --fault
	break_ func(f *fixture)
}

func demoCases() []demoCase {
	return []demoCase{
		{"hca-down", "node-03/mlx5_1:down", demoPortDown("node-03", 1)},
		{"nodes-loss-30pct", "node-05~node-09:loss=30%", func(f *fixture) {
			for i, n := range []string{"node-05", "node-06", "node-07", "node-08", "node-09"} {
				f.touching(n, AllRails, lossy(0.3, int64(10+i)))
			}
		}},
		{"node-bw-0.4", "node-07:bw=0.4", func(f *fixture) { f.touching("node-07", AllRails, scaleBW(0.4)) }},
		{"node-lat-5x", "node-02:lat=5x", func(f *fixture) { f.touching("node-02", AllRails, slowAll(5)) }},
		{"node-dead", "node-04:dead", demoDead("node-04")},
		{"hca-mtu-1024", "node-06/mlx5_0:mtu=1024", func(f *fixture) {
			f.touching("node-06", 0, fail(probe.ClassMTUMismatch,
				"large writes fail while small ones pass: 65536-byte RDMA WRITEs (4096-byte packets, path MTU 4096) were never "+
					"acknowledged, but writes of up to 1024 bytes get through; a hop drops bigger frames",
				"make every hop carry 4096-byte packets plus headers: switch ports, bridges and netdevs at MTU 9000 (`ip link`)"))
		}},
		{"node-gid-wrong", "node-03:gid=wrong", func(f *fixture) {
			for r := range 2 {
				dev := fmt.Sprintf("mlx5_%d", r)
				f.touching("node-03", r, fail(probe.ClassInvalidGID,
					"RTR rejected GID index 3 of "+dev+" on node-03: the entry is empty or not a usable RoCE v2 GID",
					"use GID index 3 (RoCE v2) or -1 to let the worker choose; `show_gids` shows the table"))
			}
		}},
		{"node-tail-20x", "node-13:tail=20x", func(f *fixture) { f.touching("node-13", AllRails, tail(20)) }},
		{"hca-loss-5pct", "node-05/mlx5_0:loss=5%", func(f *fixture) { f.touching("node-05", 0, lossy(0.05, 5)) }},
		{"hca-egress-loss-30pct", "node-05/mlx5_0:loss=30%@egress", func(f *fixture) {
			// A test meets the initiator's egress in full and the target's
			// egress on its acknowledgements only.
			f.rowCol("node-05", 0, lossy(0.3, 7), lossy(0.03, 8))
		}},
		{"hca-ingress-bw-0.3", "node-11/mlx5_1:bw=0.3@ingress", func(f *fixture) { f.rowCol("node-11", 1, nil, scaleBW(0.3)) }},
		{"three-faults", "node-03/mlx5_1:down --fault node-07:bw=0.4 --fault node-04:dead", func(f *fixture) {
			demoPortDown("node-03", 1)(f)
			f.touching("node-07", AllRails, scaleBW(0.4))
			demoDead("node-04")(f)
		}},
	}
}

// demoPortDown: the port's own tests fail to open it, its peers' writes
// to it are never acknowledged, and its inventory says DOWN.
func demoPortDown(node string, rail int) func(f *fixture) {
	return func(f *fixture) {
		dev := fmt.Sprintf("mlx5_%d", rail)
		down := fail(probe.ClassPortDown, dev+" port 1 on "+node+" is DOWN (phys_state Disabled)",
			"check the cable and the switch port of "+dev+" on "+node+"; `ibstat "+dev+"` should show State: Active")
		lost := fail(probe.ClassRetryExceeded, "transport retry counter exceeded: writes to "+node+"/"+dev+" were never acknowledged",
			"check the cable/transceiver and the switch port at each end")
		f.rowCol(node, rail, down, lost)
		for i := range f.nodes {
			if f.nodes[i].Name == node {
				f.nodes[i].Ports[rail].State = "DOWN"
			}
		}
	}
}

// demoDead: the worker is gone; membership says so and no test reaches it.
func demoDead(node string) func(f *fixture) {
	return func(f *fixture) {
		f.touching(node, AllRails, fail(probe.ClassPeerLost, "the worker on "+node+" did not answer", ""))
		for i := range f.nodes {
			if f.nodes[i].Name == node {
				f.nodes[i].State = "dead"
			}
		}
	}
}

// lossy fails each cell it is applied to with probability p, drawn from
// its own seeded stream so a case is the same on every run.
func lossy(p float64, seed int64) func(c *Cell) {
	rng := rand.New(rand.NewSource(seed))
	lost := fail(probe.ClassRetryExceeded, "transport retry counter exceeded (IBV_WC_RETRY_EXC_ERR)",
		"check the cable/transceiver and the switch port at each end")
	return func(c *Cell) {
		if rng.Float64() < p {
			lost(c)
		}
	}
}

// slowAll multiplies every latency figure, as the sim's lat=Nx does.
func slowAll(x float64) func(c *Cell) {
	return func(c *Cell) {
		if c.Latency != nil {
			l := *c.Latency
			l.MinNs, l.P50Ns, l.P99Ns, l.MaxNs = l.MinNs*x, l.P50Ns*x, l.P99Ns*x, l.MaxNs*x
			c.Latency = &l
		}
	}
}
