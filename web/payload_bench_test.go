package web

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/web/internal/synth"
)

// The 1,024 x 8 matrix takes seconds and GBs to build, so every benchmark
// in a run shares one.
var (
	hugeOnce   sync.Once
	hugeMatrix *matrix.Matrix
)

func huge(b *testing.B) *matrix.Matrix {
	b.Helper()
	hugeOnce.Do(func() {
		start := time.Now()
		hugeMatrix = synth.Matrix(1024, 8)
		b.Logf("built the 1,024 x 8 matrix (%d cells) in %s", hugeMatrix.NumCells(), time.Since(start).Round(time.Millisecond))
	})
	return hugeMatrix
}

// BenchmarkCompactPayload measures what the UI downloads for a 1,024-node,
// 8-rail sweep (8,380,416 cells): the grid JSON plus one layer per view,
// gzipped as served. It reports the first paint's payload (grid + the
// all-rails status layer) and the largest single layer; the log lists
// every layer. Run: go test -run '^$' -bench CompactPayload ./web/
func BenchmarkCompactPayload(b *testing.B) {
	m := huge(b)
	start := time.Now()
	v := mustView(b, m)
	b.Logf("view (order, status codes, HCA tallies) in %s", time.Since(start).Round(time.Millisecond))
	gridRaw, err := json.Marshal(v.grid("huge"))
	if err != nil {
		b.Fatal(err)
	}
	grid := newBlob(gridRaw)
	b.Logf("%-18s %9d raw %8d gzip", "grid", len(grid.raw), len(grid.gz))
	var statusAll, largest int
	for _, name := range []string{"status", "p50", "p99", "bw", "line"} {
		for _, rail := range []int{allRails, 0, synth.DeadHCARail} {
			start := time.Now()
			raw, err := v.encodeLayer(context.Background(), name, rail)
			if err != nil {
				b.Fatal(err)
			}
			enc := time.Since(start)
			bl := newBlob(raw)
			b.Logf("%-18s %9d raw %8d gzip  (encode %s, gzip %s)", fmt.Sprintf("layer %s rail %d", name, rail),
				len(raw), len(bl.gz), enc.Round(time.Millisecond), (time.Since(start) - enc).Round(time.Millisecond))
			if name == "status" && rail == allRails {
				statusAll = len(bl.gz)
			}
			largest = max(largest, len(bl.gz))
		}
	}
	first := len(grid.gz) + statusAll
	if first > 2<<20 || largest > 2<<20 {
		b.Errorf("over the 2 MB budget: first paint %d bytes, largest layer %d", first, largest)
	}
	b.ReportMetric(float64(first), "first-paint-bytes")
	b.ReportMetric(float64(largest), "largest-layer-bytes")
	b.ResetTimer()
	for b.Loop() {
		if _, err := v.encodeLayer(context.Background(), "p50", allRails); err != nil {
			b.Fatal(err)
		}
	}
}
