package web

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/testkit/procstat"
	"github.com/rdmamesh/rdmamesh/web/internal/synth"
)

// BenchmarkBadCellsRailDown is GET .../matrix?cells=bad on a 1,024 x 8
// sweep with rail 2 down on every node (1,047,552 bad cells): the compact
// BadOnly view the handler serves, against the same bad cells materialised
// first (Materialize), in one process. It reports
// each one's time, the heap it grew by at its peak and the JSON's size,
// and fails when the two JSONs differ. Run:
// go test -run '^$' -bench BadCellsRailDown -benchtime 1x ./web/
func BenchmarkBadCellsRailDown(b *testing.B) {
	m := synth.MatrixWith(1024, 8, synth.Faults{RailDown: 2})
	runtime.GC()
	type run struct {
		took         time.Duration
		peak         uint64
		size         int64
		sum          string
		bad          int
		materialised bool
	}
	measure := func(materialise bool) run {
		runtime.GC()
		base := procstat.HeapObjects()
		heap := procstat.StartHeapSampler(2 * time.Millisecond)
		start := time.Now()
		v := m.BadOnly()
		if materialise {
			v = v.Materialize()
		}
		w := newCounter()
		if err := v.WriteJSON(w); err != nil {
			b.Fatal(err)
		}
		r := run{took: time.Since(start), size: w.n, sum: fmt.Sprintf("%x", w.h.Sum(nil)), bad: v.NumCells(), materialised: materialise}
		peak := heap.Stop()
		r.peak = peak - min(base, peak)
		runtime.KeepAlive(v)
		return r
	}
	var view, old run
	for b.Loop() {
		view, old = measure(false), measure(true)
	}
	if view.sum != old.sum || view.size != old.size || view.bad < 1024*1023 {
		b.Fatalf("view: %d bad cells, %d bytes %s; materialised: %d bytes %s", view.bad, view.size, view.sum, old.size, old.sum)
	}
	// Through the handler: the answer is the view's JSON.
	h := New(synthBackend(m), Options{}).Handler()
	w := newCounter()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/v1/sweeps/big/matrix?cells=bad", nil))
	if w.code != 200 || w.n != view.size || fmt.Sprintf("%x", w.h.Sum(nil)) != view.sum {
		b.Fatalf("handler: status %d, %d bytes; want the view's %d", w.code, w.n, view.size)
	}
	for _, r := range []run{view, old} {
		name := "view"
		if r.materialised {
			name = "materialised"
		}
		b.Logf("%-12s %d bad cells: %6.2f s, heap +%5.0f MB at peak, JSON %.0f MB", name, r.bad, r.took.Seconds(), float64(r.peak)/1e6, float64(r.size)/1e6)
	}
	b.ReportMetric(float64(view.peak)/1e6, "view-peak-MB")
	b.ReportMetric(float64(old.peak)/1e6, "materialised-peak-MB")
	b.ReportMetric(view.took.Seconds(), "view-s")
	b.ReportMetric(old.took.Seconds(), "materialised-s")
}

// counter is a ResponseWriter (and io.Writer) that keeps only the size
// and a hash of what is written: a recorder would hold 500 MB.
type counter struct {
	hdr  http.Header
	code int
	n    int64
	h    hash.Hash
}

func newCounter() *counter { return &counter{hdr: http.Header{}, code: 200, h: sha256.New()} }

func (c *counter) Header() http.Header  { return c.hdr }
func (c *counter) WriteHeader(code int) { c.code = code }
func (c *counter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.h.Write(p)
}
