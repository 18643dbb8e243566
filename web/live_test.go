package web

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/web/internal/synth"
)

// liveFake is the fake coordinator with an always-on mesh whose window the
// test moves on.
type liveFake struct {
	*fakeBackend
	lmu       sync.Mutex
	info      api.LiveInfo
	m         *matrix.Matrix
	infoCalls int
}

func newLiveFake(m *matrix.Matrix) *liveFake {
	return &liveFake{fakeBackend: newFake(), m: m, info: api.LiveInfo{Enabled: true, PlanID: 1, Members: 3, Probing: 3,
		Window: 1, WindowStart: time.Unix(1700000000, 0).UTC(), WindowSeconds: 10, AgeSeconds: 2,
		CoverageSeconds: 270, HorizonWindows: 3, RatePerHCA: 50, Cells: 12, Healthy: m == nil || m.Healthy}}
}

func (f *liveFake) LiveInfo() api.LiveInfo {
	f.lmu.Lock()
	defer f.lmu.Unlock()
	f.infoCalls++
	return f.info
}

func (f *liveFake) LiveMatrix() (*matrix.Matrix, api.LiveInfo, bool) {
	f.lmu.Lock()
	defer f.lmu.Unlock()
	return f.m, f.info, f.m != nil && f.info.Enabled
}

// window moves the mesh to window w judged as m.
func (f *liveFake) window(w int64, m *matrix.Matrix) {
	f.lmu.Lock()
	defer f.lmu.Unlock()
	f.info.Window, f.m = w, m
	f.info.Healthy, f.info.Suspects = m.Healthy, len(m.Suspects)
}

func (f *liveFake) change(fn func(*api.LiveInfo)) {
	f.lmu.Lock()
	defer f.lmu.Unlock()
	fn(&f.info)
}

func (f *liveFake) infoPolls() int {
	f.lmu.Lock()
	defer f.lmu.Unlock()
	return f.infoCalls
}

func TestLiveWithoutLiveBackendIs404(t *testing.T) {
	h := serve(t, newFake())
	for _, p := range []string{"/api/v1/live", "/api/v1/live/events", "/api/v1/sweeps/live/grid",
		"/api/v1/sweeps/live/matrix", "/api/v1/sweeps/live/layer", "/api/v1/sweeps/live/pair?src=n1&dst=n2"} {
		e := wantError(t, do(t, h, "GET", p, ""), http.StatusNotFound, "")
		if !strings.Contains(e.Error, "no live mesh") {
			t.Errorf("%s: %q does not say there is no live mesh", p, e.Error)
		}
	}
}

func TestLiveDisabledIs404SayingWhy(t *testing.T) {
	f := newLiveFake(testMatrix())
	f.change(func(i *api.LiveInfo) { i.Enabled = false })
	h := New(f, Options{}).Handler()
	for _, p := range []string{"/api/v1/live", "/api/v1/live/events", "/api/v1/sweeps/live/grid", "/api/v1/sweeps/live/layer"} {
		e := wantError(t, do(t, h, "GET", p, ""), http.StatusNotFound, "")
		if !strings.Contains(e.Error, "live probing is off") || !strings.Contains(e.Error, "live.enabled") {
			t.Errorf("%s: %q", p, e.Error)
		}
	}
	f.change(func(i *api.LiveInfo) { i.Error = "no worker has a probe port" })
	if e := wantError(t, do(t, h, "GET", "/api/v1/live", ""), http.StatusNotFound, ""); !strings.Contains(e.Error, "no worker has a probe port") {
		t.Errorf("the backend's reason is lost: %q", e.Error)
	}
}

func TestLiveInfo(t *testing.T) {
	f := newLiveFake(testMatrix())
	h := New(f, Options{}).Handler()
	got := decode[api.LiveInfo](t, do(t, h, "GET", "/api/v1/live", ""))
	if !reflect.DeepEqual(got, f.LiveInfo()) {
		t.Fatalf("GET /api/v1/live = %+v, want %+v", got, f.LiveInfo())
	}
}

func TestLiveIsNotASweep(t *testing.T) {
	h := New(newLiveFake(testMatrix()), Options{}).Handler()
	for _, p := range []string{"/api/v1/sweeps/live", "/api/v1/sweeps/live/events"} {
		if e := wantError(t, do(t, h, "GET", p, ""), http.StatusNotFound, ""); !strings.Contains(e.Error, "GET /api/v1/live") {
			t.Errorf("%s: %q does not point to the live routes", p, e.Error)
		}
	}
}

func TestLiveWithoutWindowYet(t *testing.T) {
	h := New(newLiveFake(nil), Options{}).Handler()
	if rec := do(t, h, "GET", "/api/v1/live", ""); rec.Code != 200 {
		t.Fatalf("live info: %d", rec.Code)
	}
	e := wantError(t, do(t, h, "GET", "/api/v1/sweeps/live/grid", ""), http.StatusNotFound, "")
	if !strings.Contains(e.Error, "no window") {
		t.Errorf("%q", e.Error)
	}
}

// The live matrix is served exactly as a sweep's: grid, layer, pair and the
// exports.
func TestLiveMatrixRoutes(t *testing.T) {
	h := New(newLiveFake(testMatrix()), Options{}).Handler()
	g := decode[gridInfo](t, do(t, h, "GET", "/api/v1/sweeps/live/grid", ""))
	if g.Sweep != api.LiveID || len(g.Nodes) != 3 || len(g.Suspects) != 1 || g.Suspects[0].Node != "n3" {
		t.Fatalf("grid: sweep %q, %d nodes, suspects %+v", g.Sweep, len(g.Nodes), g.Suspects)
	}
	rec := do(t, h, "GET", "/api/v1/sweeps/live/layer?metric=status&rail=1", "")
	hdr, body, err := decodeLayer(rec.Body.Bytes())
	if rec.Code != 200 || err != nil {
		t.Fatalf("layer: %d %v", rec.Code, err)
	}
	if hdr.Order != g.Order || hdr.N != 3 || hdr.Counts[statusFailed] != 4 || body[2] != statusFailed {
		t.Fatalf("layer header %+v (grid order %q), body %v", hdr, g.Order, body)
	}
	p := decode[pairInfo](t, do(t, h, "GET", "/api/v1/sweeps/live/pair?src=n1&dst=n3", ""))
	if p.Sweep != api.LiveID || len(p.Forward) != 2 || p.Forward[1].Verdict != matrix.VerdictFailed {
		t.Fatalf("pair %+v", p)
	}
	m := decode[matrix.Matrix](t, do(t, h, "GET", "/api/v1/sweeps/live/matrix?cells=bad", ""))
	if m.Healthy || m.NumCells() != 4 {
		t.Fatalf("bad cells: healthy %v, %d cells", m.Healthy, m.NumCells())
	}
	rec = do(t, h, "GET", "/api/v1/sweeps/live/matrix?format=csv&download=1", "")
	if cd := rec.Header().Get("Content-Disposition"); rec.Code != 200 || !strings.Contains(cd, "live") {
		t.Fatalf("csv download: %d %q", rec.Code, cd)
	}
	wantError(t, do(t, h, "GET", "/api/v1/sweeps/live/layer?rail=7", ""), http.StatusBadRequest, "rail")
}

// A new window is a new matrix: its answers must replace the old window's,
// while an unchanged window revalidates to 304 and the live views never
// push the sweeps' out of the cache.
func TestLiveCacheFollowsWindows(t *testing.T) {
	healthy := synth.MatrixWith(16, 2, synth.NoFaults)
	f := newLiveFake(healthy)
	s := New(f, Options{})
	h := s.Handler()
	grid := func() (gridInfo, string) {
		rec := do(t, h, "GET", "/api/v1/sweeps/live/grid", "")
		if rec.Code != 200 {
			t.Fatalf("grid: %d %s", rec.Code, rec.Body)
		}
		return decode[gridInfo](t, rec), rec.Header().Get("ETag")
	}
	layerTag := func() string { return do(t, h, "GET", "/api/v1/sweeps/live/layer", "").Header().Get("ETag") }

	sweepM, _ := f.Matrix("s1")
	if rec := do(t, h, "GET", "/api/v1/sweeps/s1/grid", ""); rec.Code != 200 {
		t.Fatalf("sweep grid: %d", rec.Code)
	}
	g1, tag1 := grid()
	ltag1 := layerTag()
	if !g1.Healthy || len(g1.Suspects) != 0 {
		t.Fatalf("window 1: healthy %v, suspects %+v", g1.Healthy, g1.Suspects)
	}
	if rec := do(t, h, "GET", "/api/v1/sweeps/live/grid", "", "If-None-Match", tag1); rec.Code != http.StatusNotModified {
		t.Fatalf("same window, revalidated: %d", rec.Code)
	}

	f.window(2, synth.MatrixWith(16, 2, synth.Faults{DeadHCA: true, RailDown: -1}))
	g2, tag2 := grid()
	if tag2 == tag1 || g2.Healthy || len(g2.Suspects) == 0 {
		t.Fatalf("window 2 still answers window 1's grid: etag %s→%s, healthy %v, suspects %+v", tag1, tag2, g2.Healthy, g2.Suspects)
	}
	dead := synth.Name(synth.DeadHCANode)
	if s := g2.Suspects[0]; s.Kind != "hca" || s.Node != dead {
		t.Fatalf("window 2's first suspect %+v, want the HCA of %s", s, dead)
	}
	if rec := do(t, h, "GET", "/api/v1/sweeps/live/grid", "", "If-None-Match", tag1); rec.Code != 200 {
		t.Fatalf("window 1's ETag revalidated window 2: %d", rec.Code)
	}
	if layerTag() == ltag1 {
		t.Fatal("window 2's status layer is window 1's")
	}

	for w := int64(3); w < 10; w++ {
		f.window(w, synth.MatrixWith(16, 2, synth.NoFaults))
		grid()
	}
	if s.views.lookup(sweepM) == nil {
		t.Error("live windows evicted the sweep's views")
	}
	s.liveViews.mu.Lock()
	n := len(s.liveViews.entries)
	s.liveViews.mu.Unlock()
	if n > maxLiveViews {
		t.Errorf("%d live views held, want at most %d", n, maxLiveViews)
	}
	if s.views.lookup(healthy) != nil {
		t.Error("a live matrix landed in the sweeps' cache")
	}
}

// Membership changes the live matrix's node order: the grid and its layers
// name their order so the UI can tell them apart.
func TestLiveOrderKeyFollowsNodes(t *testing.T) {
	f := newLiveFake(synth.MatrixWith(16, 2, synth.NoFaults))
	h := New(f, Options{}).Handler()
	order := func() (string, string) {
		g := decode[gridInfo](t, do(t, h, "GET", "/api/v1/sweeps/live/grid", ""))
		hdr, _, err := decodeLayer(do(t, h, "GET", "/api/v1/sweeps/live/layer", "").Body.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		return g.Order, hdr.Order
	}
	g1, l1 := order()
	f.window(2, synth.MatrixWith(16, 2, synth.Faults{DeadHCA: true, RailDown: -1}))
	g2, _ := order()
	f.window(3, synth.MatrixWith(17, 2, synth.NoFaults))
	g3, l3 := order()
	if g1 == "" || g1 != l1 || g3 != l3 {
		t.Fatalf("grid and layer orders differ: %q/%q, %q/%q", g1, l1, g3, l3)
	}
	if g2 != g1 {
		t.Errorf("same nodes, different order keys %q, %q", g1, g2)
	}
	if g3 == g1 {
		t.Errorf("a node joined and the order key stayed %q", g1)
	}
}

func nextWindow(t *testing.T, ch <-chan sseEvent) api.LiveInfo {
	t.Helper()
	ev := next(t, ch)
	var info api.LiveInfo
	if ev.name != "window" || json.Unmarshal([]byte(ev.raw), &info) != nil {
		t.Fatalf("event %q %s, want a window", ev.name, ev.raw)
	}
	return info
}

func TestLiveEventsOnEveryWindow(t *testing.T) {
	f := newLiveFake(testMatrix())
	ts := eventServer(t, f, Options{})
	ch, res := stream(t, ts.URL+"/api/v1/live/events")
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	if info := nextWindow(t, ch); info.Window != 1 || info.PlanID != 1 || info.RatePerHCA != 50 {
		t.Fatalf("first event %+v", info)
	}

	// Age and the probing count change all the time; only a window or a
	// plan makes an event.
	polled := f.infoPolls()
	f.change(func(i *api.LiveInfo) { i.AgeSeconds, i.Probing = 7, 2 })
	wait.For(t, "three more polls", func() bool { return f.infoPolls() >= polled+3 })
	select {
	case ev := <-ch:
		t.Fatalf("event without a new window: %s %s", ev.name, ev.raw)
	default:
	}

	f.window(2, synth.MatrixWith(16, 2, synth.Faults{DeadHCA: true, RailDown: -1}))
	if info := nextWindow(t, ch); info.Window != 2 || info.Healthy || info.Suspects == 0 {
		t.Fatalf("window 2 event %+v", info)
	}
	f.change(func(i *api.LiveInfo) { i.PlanID = 2 })
	if info := nextWindow(t, ch); info.PlanID != 2 || info.Window != 2 {
		t.Fatalf("new plan event %+v", info)
	}
	f.change(func(i *api.LiveInfo) { i.Enabled = false })
	if info := nextWindow(t, ch); info.Enabled {
		t.Fatalf("switching live off made no event: %+v", info)
	}
}

func TestLiveEventsAuth(t *testing.T) {
	ts := eventServer(t, newLiveFake(testMatrix()), Options{Token: "sekrit"})
	if _, res := stream(t, ts.URL+"/api/v1/live/events"); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: status %d", res.StatusCode)
	}
	ch, res := stream(t, ts.URL+"/api/v1/live/events", "Authorization", "Bearer sekrit")
	if res.StatusCode != 200 || nextWindow(t, ch).Window != 1 {
		t.Fatalf("with token: status %d", res.StatusCode)
	}
	if rec, err := http.Get(ts.URL + "/api/v1/live"); err != nil || rec.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /api/v1/live without token: %v %v", rec.StatusCode, err)
	}
}

// The stream ends with its client: the handler stops asking the backend.
func TestLiveEventsStopWhenClientLeaves(t *testing.T) {
	f := newLiveFake(testMatrix())
	ts := eventServer(t, f, Options{})
	ch, res := stream(t, ts.URL+"/api/v1/live/events")
	nextWindow(t, ch)
	res.Body.Close()
	waitStopped(t, f.infoPolls)
}
