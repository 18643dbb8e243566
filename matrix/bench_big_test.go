package matrix

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// hugeFabric is 1,024 nodes x 8 rails (8,380,416 cells) with a dead HCA, a
// slow node and a bad pair. Latency and bandwidth figures live in two big
// slices, as a decoder would hand them over, so building the input does not
// dominate the benchmark's own setup time.
func hugeFabric(n, rails int) ([]Node, []Cell) {
	nodes := make([]Node, n)
	names := make([]string, n)
	for i := range nodes {
		names[i] = fmt.Sprintf("node-%04d", i+1)
		nodes[i] = Node{Name: names[i], State: "alive", Labels: map[string]string{"leaf": fmt.Sprintf("L%02d", i/32)}}
		for r := 0; r < rails; r++ {
			nodes[i].Ports = append(nodes[i].Ports, probe.Port{Device: fmt.Sprintf("mlx5_%d", r), Port: 1, Rail: r,
				LinkLayer: "InfiniBand", State: "ACTIVE", RateGbps: 400, MTU: 4096, Usable: true})
		}
	}
	total := n * (n - 1) * rails
	cells := make([]Cell, 0, total)
	lats := make([]probe.Latency, total)
	bws := make([]probe.Bandwidth, total)
	devs := make([]string, rails)
	for r := range devs {
		devs[r] = fmt.Sprintf("mlx5_%d", r)
	}
	portDown := &probe.Error{Class: probe.ClassPortDown, Cause: "port down"}
	for r := 0; r < rails; r++ {
		for s := 0; s < n; s++ {
			for d := 0; d < n; d++ {
				if s == d {
					continue
				}
				k := len(cells)
				jitter := float64((s*7 + d*13 + r*5) % 60)
				lats[k] = probe.Latency{Samples: 1000, MinNs: 900, P50Ns: 1000 + jitter, P99Ns: 1500 + jitter, MaxNs: 3000}
				bws[k] = probe.Bandwidth{Gbps: 390 + jitter/20, MsgRate: 7e5, Bytes: 1 << 24, Duration: 0.01}
				c := Cell{Src: names[s], Dst: names[d], Rail: r, SrcDevice: devs[r], DstDevice: devs[r],
					Round: 1, Class: probe.ClassOK, Latency: &lats[k], Bandwidth: &bws[k]}
				switch {
				case r == 3 && (s == 9 || d == 9):
					c.Class, c.Error, c.Latency, c.Bandwidth = probe.ClassPortDown, portDown, nil, nil
				case s == 19 || d == 19:
					lats[k].P50Ns *= 4
				case r == 5 && s == 29 && d == 30:
					c.Class, c.Error, c.Latency, c.Bandwidth = probe.ClassRetryExceeded,
						&probe.Error{Class: probe.ClassRetryExceeded, Cause: "retry exceeded"}, nil, nil
				}
				cells = append(cells, c)
			}
		}
	}
	return nodes, cells
}

// BenchmarkBuildHuge is Build of a 1,024 x 8 sweep handed in as a
// []Cell, every cell materialised. It is a benchmark only: the input alone takes a few GB, far too much for go test.
//
// Besides ns/op, B/op and allocs/op it reports input-MB (the live heap
// holding the input cells) and matrix-MB (what one built Matrix adds while
// it is kept); the process's peak RSS is input + matrix + Build's
// temporaries + GC headroom, measured with /usr/bin/time -v (README.md).
func BenchmarkBuildHuge(b *testing.B) {
	nodes, cells := hugeFabric(1024, 8)
	input := liveHeap()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	var m *Matrix
	for b.Loop() {
		m = Build(nodes, cells, DefaultThresholds())
	}
	b.StopTimer()
	// CPU seconds per Build (all threads, GC included): unlike ns/op, it
	// does not grow when other processes share the machine.
	if cpu >= 0 {
		b.ReportMetric((processCPU()-cpu)/float64(b.N), "cpu-s/op")
	}
	if len(m.Cells) != 1024*1023*8 || len(m.Suspects) != 3 {
		b.Fatalf("%d cells, suspects:\n%s", len(m.Cells), m.Summary())
	}
	b.ReportMetric(float64(input)/1e6, "input-MB")
	b.ReportMetric(float64(liveHeap()-input)/1e6, "matrix-MB")
	runtime.KeepAlive(m)
	runtime.KeepAlive(cells)
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
