//go:build e2e

package e2e

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/web"
	"github.com/rdmamesh/rdmamesh/web/internal/synth"
)

// liveStatic is a coordinator with one old sweep and an always-on mesh the
// test drives: it moves the window on and lets it go stale.
type liveStatic struct {
	*static
	mu     sync.Mutex
	m      *matrix.Matrix
	info   api.LiveInfo
	staleT time.Time // zero: fresh (each answer's window just ended); else when the newest window ended
}

func (l *liveStatic) LiveInfo() api.LiveInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := l.info
	if !l.staleT.IsZero() {
		i.AgeSeconds = time.Since(l.staleT).Seconds()
	}
	return i
}

func (l *liveStatic) LiveMatrix() (*matrix.Matrix, api.LiveInfo, bool) {
	i := l.LiveInfo()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m, i, true
}

func (l *liveStatic) window(w int64, m *matrix.Matrix) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.info.Window, l.info.Healthy, l.info.Suspects, l.m = w, m.Healthy, len(m.Suspects), m
}

// stopWindows makes the newest window end ago in the past and age from there.
func (l *liveStatic) stopWindows(ago time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.staleT = time.Now().Add(-ago)
}

// TestUILiveView: the Live entry, its header line, the heatmap and suspects
// following the live windows over SSE, and the stale mark.
func TestUILiveView(t *testing.T) {
	const nodes, rails = 32, 4
	b := &liveStatic{static: newStatic(synth.MatrixWith(nodes, rails, synth.NoFaults)),
		m: synth.MatrixWith(nodes, rails, synth.NoFaults),
		info: api.LiveInfo{Enabled: true, PlanID: 1, Members: nodes, Probing: nodes, Window: 1, WindowSeconds: 10,
			AgeSeconds: 1, CoverageSeconds: 270, HorizonWindows: 3, RatePerHCA: 50, Healthy: true}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: web.New(b, web.Options{Title: "rdmamesh live"}).Handler()}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serving the UI: %v", err)
		}
	})
	ctx := browser(t)
	openDefault(t, ctx, "http://"+ln.Addr().String())

	poll[bool](t, ctx, "the Live entry in the sweep list",
		`document.getElementById("sweep").options[0].value === "live"`)
	within(t, ctx, 5*time.Second, "pick Live", chromedp.Evaluate[bool](
		`(() => { const s = document.getElementById("sweep"); s.value = "live"; s.dispatchEvent(new Event("change")); return true; })()`))
	poll[bool](t, ctx, "the live heatmap", `window.rdmamesh.grid && window.rdmamesh.grid.sweep === "live" && !document.getElementById("live-line").hidden`)
	line := within(t, ctx, 5*time.Second, "the live line", chromedp.Evaluate[string](`document.getElementById("live-text").textContent`))
	for _, want := range []string{"Live · window 1 ·", "s ago", "every pair within 4 min 30 s", "≤ 50 probes/s per HCA", "32 of 32 nodes probing"} {
		if !strings.Contains(line, want) {
			t.Errorf("live line %q lacks %q", line, want)
		}
	}
	if stale := within(t, ctx, 5*time.Second, "the stale mark", chromedp.Evaluate[bool](`!document.getElementById("live-stale").hidden`)); stale {
		t.Error("a fresh live view is marked STALE")
	}
	if s := within(t, ctx, 5*time.Second, "suspects", chromedp.Evaluate[string](`document.getElementById("suspects").textContent`)); s != "No suspects." {
		t.Errorf("healthy live window lists suspects: %q", s)
	}
	screenshot(t, ctx, "20-live-healthy")

	// Window 2 finds node-0010's mlx5_1 dead. Once the page has settled on
	// window 1, only the window event can tell it: the list poll reloads
	// nothing while a grid is shown.
	poll[bool](t, ctx, "the page to settle on window 1", `window.rdmamesh.liveWindows.includes(1) && window.rdmamesh.idle`)
	b.mu.Lock()
	b.info.LinkFlows = 96
	b.info.Links = []api.LiveLink{{Cable: "leaf-r1-02:33 <-> spine-r1-00:3", State: "lossy", Loss: 0.021, Worst: 0.021, Probes: 960,
		Lost: 20, Flows: 4, Partners: 6, Since: 2, LastBad: 2}}
	b.mu.Unlock()
	b.window(2, synth.MatrixWith(nodes, rails, synth.Faults{DeadHCA: true, RailDown: -1}))
	want := synth.Name(synth.DeadHCANode) + "/mlx5_1"
	poll[bool](t, ctx, "the suspect "+want+" in the Live view",
		`window.rdmamesh.liveWindows.includes(2) && document.getElementById("suspects").textContent.includes("`+want+`")`+
			` && document.getElementById("heatmap").dataset.painted === "1" && window.rdmamesh.grid.healthy === false`)
	poll[bool](t, ctx, "the header on window 2", `document.getElementById("live-text").textContent.includes("window 2 ·")`)
	poll[bool](t, ctx, "the lossy cable's badge", `document.getElementById("live-links").textContent.includes("96 link flows")`+
		` && document.querySelector("#live-links .badge.link-lossy").textContent === "leaf-r1-02:33 <-> spine-r1-00:3 lossy 2.1 %"`)
	// The layer follows the grid (the suspects are drawn from the grid).
	poll[bool](t, ctx, "window 2's failed pairs on the heatmap",
		`window.rdmamesh.findCode(5) !== null && document.getElementById("heatmap").dataset.layer === "status:all"`)
	screenshot(t, ctx, "21-live-suspect")

	// The drill-down reads the live pair like a sweep's.
	xy := within(t, ctx, 5*time.Second, "a failed cell's position", chromedp.Evaluate[struct{ X, Y float64 }](
		`(() => { const c = window.rdmamesh.findCode(5), p = window.rdmamesh.cellCenter(c.i, c.j); return {X: p.x, Y: p.y}; })()`))
	do(t, ctx, "click the failed cell", chromedp.MouseClickXY(xy.X, xy.Y))
	drill := poll[string](t, ctx, "the live drill-down",
		`(() => { const d = document.getElementById("drill"); return d.open && d.textContent.includes("Cause:") && d.textContent; })()`)
	if !strings.Contains(drill, "mlx5_1 port 1 on "+synth.Name(synth.DeadHCANode)+" is DOWN") {
		t.Errorf("live drill-down lacks the dead port's cause: %.400s", drill)
	}
	do(t, ctx, "close the drill-down", chromedp.Click(chromedp.ID("drill-close")))

	// No window for 25 s and counting: past three 10 s windows the page
	// marks the view stale.
	b.stopWindows(25 * time.Second)
	poll[bool](t, ctx, "the STALE mark", `!document.getElementById("live-stale").hidden && document.getElementById("live-line").dataset.stale === "1"`)
	screenshot(t, ctx, "22-live-stale")
}
