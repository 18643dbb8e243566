package matrix

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// synthSource is hugeFabric's sweep as a FigureSource, computed per cell,
// so a 2,048 x 8 sweep (33 M cells) is analysed without a []Cell of it:
// like the coordinator's grid, the input costs (next to) nothing here.
type synthSource struct {
	nodes    []Node
	rails    int
	portDown *probe.Error
}

func newSynthSource(n, rails int) *synthSource {
	nodes, _ := hugeFabric(n, 0)
	for i := range nodes {
		for r := 0; r < rails; r++ {
			nodes[i].Ports = append(nodes[i].Ports, probe.Port{Device: fmt.Sprintf("mlx5_%d", r), Port: 1, Rail: r,
				LinkLayer: "InfiniBand", State: "ACTIVE", RateGbps: 400, MTU: 4096, Usable: true})
		}
	}
	return &synthSource{nodes: nodes, rails: rails, portDown: &probe.Error{Class: probe.ClassPortDown, Cause: "port down"}}
}

func (s *synthSource) Rails() int        { return s.rails }
func (s *synthSource) Has(_, _ int) bool { return true }
func (s *synthSource) broken(a, b, r int) probe.Class {
	switch {
	case r == 3 && (a == 9 || b == 9):
		return probe.ClassPortDown
	case r == 5 && a == 29 && b == 30:
		return probe.ClassRetryExceeded
	}
	return probe.ClassOK
}

func (s *synthSource) Figures(f *Figures, a, b, r int) bool {
	if cl := s.broken(a, b, r); cl != probe.ClassOK {
		*f = Figures{Class: cl, Round: 1, Whole: true}
		return true
	}
	jitter := float64((a*7 + b*13 + r*5) % 60)
	p50 := 1000 + jitter
	if a == 19 || b == 19 {
		p50 *= 4
	}
	*f = Figures{Class: probe.ClassOK, Round: 1, Latency: true, P50Ns: p50, P99Ns: 1500 + jitter, Samples: 1000,
		Bandwidth: true, Gbps: 390 + jitter/20, MsgRate: 7e5}
	return true
}

func (s *synthSource) Fill(c *Cell, a, b, r int) bool {
	var f Figures
	s.Figures(&f, a, b, r)
	*c = Cell{Src: s.nodes[a].Name, Dst: s.nodes[b].Name, Rail: r, SrcDevice: s.nodes[a].Ports[r].Device,
		DstDevice: s.nodes[b].Ports[r].Device, Round: 1, Class: f.Class}
	switch f.Class {
	case probe.ClassOK:
		c.Latency = &probe.Latency{Samples: 1000, MinNs: 900, P50Ns: f.P50Ns, P99Ns: f.P99Ns, MaxNs: 3000}
		c.Bandwidth = &probe.Bandwidth{Gbps: f.Gbps, MsgRate: f.MsgRate, Bytes: 1 << 24, Duration: 0.01}
	case probe.ClassPortDown:
		c.Error = s.portDown
	default:
		c.Error = &probe.Error{Class: f.Class, Cause: "retry exceeded"}
	}
	return true
}

// memWatch samples the heap while a step runs and aborts the process before
// its RSS passes rssLimit: the machine is shared.
type memWatch struct {
	stop     chan struct{}
	done     sync.WaitGroup
	peakHeap uint64
}

const rssLimit = 12 << 30

func watchMemory() *memWatch {
	w := &memWatch{stop: make(chan struct{})}
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			w.peakHeap = max(w.peakHeap, ms.HeapInuse)
			if rss := processRSS(); rss > rssLimit {
				fmt.Fprintf(os.Stderr, "matrix benchmark: RSS %d MB passed the %d MB guard; aborting\n", rss>>20, rssLimit>>20)
				os.Exit(2)
			}
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

func (w *memWatch) end() uint64 {
	close(w.stop)
	w.done.Wait()
	return w.peakHeap
}

func processRSS() uint64 {
	raw, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(raw))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

func heapInuse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// BenchmarkAnalyseHuge measures the compact analysis of BENCH_NODES
// (default 1,024) x 8 over a Source that holds no cells, as the
// coordinator's grid does: the bytes a cell the analysis holds (heap in
// use after GC, minus its input), the analysis time, its CPU and the peak
// heap while it runs. BenchmarkBuildHuge is the same sweep materialised.
// A benchmark only: go test -run X -bench AnalyseHuge -benchtime 1x ./matrix/
func BenchmarkAnalyseHuge(b *testing.B) {
	n := 1024
	if v, err := strconv.Atoi(os.Getenv("BENCH_NODES")); err == nil && v > 1 {
		n = v
	}
	const rails = 8
	cells := float64(n * (n - 1) * rails)
	src := newSynthSource(n, rails)
	th := DefaultThresholds()
	var m *Matrix
	var took time.Duration
	var cpu float64
	var held, peak uint64
	for b.Loop() {
		base := heapInuse()
		w := watchMemory()
		start, cpu0 := time.Now(), processCPU()
		got := Analyse(src.nodes, src, nil, th)
		took, cpu = time.Since(start), processCPU()-cpu0
		peak = w.end() - min(base, w.peakHeap)
		held = heapInuse() - base
		m = got
	}
	if m.NumCells() != n*(n-1)*rails || len(m.Suspects) != 3 {
		b.Fatalf("%d cells, suspects:\n%s", m.NumCells(), m.Summary())
	}
	b.ReportMetric(float64(held)/cells, "B/cell")
	b.ReportMetric(took.Seconds(), "analysis-s")
	b.ReportMetric(cpu, "analysis-cpu-s")
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
	fmt.Printf("compact  %d x %d: %.0f cells, %.2f bytes a cell held (%.1f MB), analysis %.2f s (%.2f s CPU, all threads), peak heap +%.0f MB\n",
		n, rails, cells, float64(held)/cells, float64(held)/1e6, took.Seconds(), cpu, float64(peak)/1e6)
}
