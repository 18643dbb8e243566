package live

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/liveplan"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/testkit/procstat"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// BenchmarkLiveMatrix1024x8 is the coordinator's memory for the live
// matrix: 1,024 nodes x 8 rails in leaves of 32, the shipped
// plan defaults, every worker's summaries folded for 14 windows (the
// horizon is 3), then one analysis. It reports the cells and heap held
// after the last window and after the first ten, which must be alike:
// memory follows the plan, not uptime. One analysis runs per window in the
// coordinator, so analyse-s is its CPU cost every 10 s.
//
//	go test -run '^$' -bench LiveMatrix1024x8 -benchtime 1x ./coordinator/live
func BenchmarkLiveMatrix1024x8(b *testing.B) {
	const nodes, rails, leaf, windows = 1024, 8, 32, 14
	guard(b, 4<<30)
	members := make([]liveplan.Member, nodes)
	mx := make([]matrix.Node, nodes)
	for i := range members {
		members[i] = liveplan.Member{Name: fmt.Sprintf("node-%04d", i), Group: fmt.Sprintf("leaf-%02d", i/leaf)}
		mx[i] = matrix.Node{Name: members[i].Name, State: "alive", Labels: map[string]string{"group": members[i].Group}}
		for r := range rails {
			members[i].Rails = append(members[i].Rails, r)
			mx[i].Ports = append(mx[i].Ports, probe.Port{Device: fmt.Sprintf("mlx5_%d", r), Port: 1, Rail: r,
				LinkLayer: "InfiniBand", State: "ACTIVE", RateGbps: 400, Usable: true})
		}
	}
	t0 := time.Unix(1_800_000_000, 0)
	pl, cov, err := liveplan.New(1, members, liveplan.Params{}, t0)
	if err != nil {
		b.Fatal(err)
	}
	win := pl.Params.Window
	for range b.N {
		m := New(Options{})
		var heap10, cells10 uint64
		sums := make([]liveplan.Summary, 0, 256)
		for w := range int64(windows) {
			at := t0.Add(time.Duration(w)*win + win/2)
			for _, me := range members {
				sums = sums[:0]
				for r := range rails {
					for _, tg := range pl.Targets(me.Name, r, at) {
						sums = append(sums, liveplan.Summary{Node: tg.Node, Rail: r, Window: w, Sent: 5, Answered: 5,
							P50Ns: 4000, P99Ns: 4600, MaxNs: 5200})
					}
				}
				m.Fold(me.Name, sums)
			}
			if w == 9 {
				heap10, cells10 = heapInuse(), uint64(m.Len())
			}
		}
		heap, cells := heapInuse(), uint64(m.Len())
		start := time.Now()
		a := m.Analyse(mx, matrix.Thresholds{})
		took := time.Since(start)
		if !a.Healthy {
			b.Fatal("an all-ok live window judged unhealthy")
		}
		b.ReportMetric(float64(cells), "cells")
		b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
		b.ReportMetric(float64(heap)/float64(cells), "B/cell")
		b.ReportMetric(took.Seconds(), "analyse-s")
		b.Logf("coverage %v; after 10 windows %d cells, %.0f MB heap; after %d windows %d cells, %.0f MB heap (%.0f B a cell); analysis %v",
			cov.Period, cells10, float64(heap10)/(1<<20), windows, cells, float64(heap)/(1<<20), float64(heap)/float64(cells), took.Round(time.Millisecond))
		runtime.KeepAlive(m)
	}
}

func heapInuse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// guard stops the process before it passes limit bytes of resident memory:
// a runaway benchmark takes the whole machine down with it.
func guard(b *testing.B, limit uint64) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	g := &procstat.Guard{Limit: limit, Name: "BenchmarkLiveMatrix1024x8"}
	go func() {
		var br *procstat.BreachError
		if err := g.Watch(ctx); errors.As(err, &br) {
			fmt.Fprintf(os.Stderr, "benchmark stopped: %v\n", err)
			os.Exit(3)
		}
	}()
}
