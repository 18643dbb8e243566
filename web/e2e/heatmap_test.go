//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rdmamesh/rdmamesh/web/internal/synth"
)

// The default heatmap must show a fault without reading. These
// tests look at the pixels of the default view of synthetic sweeps, as an
// operator would, and fail when the fault is in the data but not plainly on
// the screen.

type rect struct{ X, Y, W, H float64 }

func canvasRect(t *testing.T, ctx context.Context) rect {
	t.Helper()
	return within(t, ctx, 5*time.Second, "canvas position", chromedp.Evaluate[rect](
		`(() => { const r = document.getElementById("heatmap").getBoundingClientRect(); return {X: r.left, Y: r.top, W: r.width, H: r.height}; })()`))
}

// leave takes the tab off its page, so that the page's polling does not
// fail on a server about to stop.
func leave(tb testing.TB, ctx context.Context) {
	tb.Helper()
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// With the browser already gone there is no page left to poll.
	if err := chromedp.Do(c, chromedp.Navigate("about:blank")); err != nil && ctx.Err() == nil {
		tb.Errorf("leave the page: %v", err)
	}
}

// openDefault loads the page afresh and waits for its first complete paint:
// the view the page chose for this sweep, with nothing clicked. The page
// leaves when the test ends, before its server stops, so its polling does
// not fail on a closed port.
func openDefault(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	t.Cleanup(func() { leave(t, ctx) })
	do(t, ctx, "open the UI", chromedp.Navigate(url))
	poll[bool](t, ctx, "the first heatmap paint", `document.getElementById("heatmap").dataset.painted === "1"`)
}

// recordText makes the page log every fillText on the heatmap canvas with
// where it lands, a "|" at each full clear (one per frame).
const recordText = `(() => {
	if (window.__texts) return true;
	window.__texts = [];
	const P = CanvasRenderingContext2D.prototype;
	const fill = P.fillText, clear = P.clearRect;
	P.fillText = function (text, x, y) {
		if (this.canvas.id === "heatmap") {
			const p = this.getTransform().transformPoint({ x, y });
			window.__texts.push(text + "@" + Math.round(p.x) + "," + Math.round(p.y));
		}
		return fill.apply(this, arguments);
	};
	P.clearRect = function () {
		if (this.canvas.id === "heatmap") window.__texts.push("|");
		return clear.apply(this, arguments);
	};
	return true; })()`

// hoverFrames hovers pair (i, j), waits for the tooltip and returns the
// texts of each frame drawn meanwhile.
func hoverFrames(t *testing.T, ctx context.Context, i, j int) [][]string {
	t.Helper()
	within(t, ctx, 5*time.Second, "record canvas text", chromedp.Evaluate[bool](recordText))
	within(t, ctx, 5*time.Second, "reset the record", chromedp.Evaluate[bool](`window.__texts.length = 0; true`))
	xy := within(t, ctx, 5*time.Second, "cell position",
		chromedp.Evaluate[struct{ X, Y float64 }](fmt.Sprintf(`(() => { const p = window.rdmamesh.cellCenter(%d, %d); return {X: p.x, Y: p.y}; })()`, i, j)))
	do(t, ctx, "hover a cell", chromedp.MouseEvent(chromedp.MouseMoved, xy.X, xy.Y))
	poll[bool](t, ctx, "the tooltip", `!document.getElementById("tooltip").hidden`)
	rec := within(t, ctx, 5*time.Second, "canvas text", chromedp.Evaluate[[]string](`window.__texts.slice()`))
	var frames [][]string
	var cur []string
	for _, s := range append(rec, "|") {
		if s == "|" {
			if len(cur) > 0 {
				frames = append(frames, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, s)
	}
	if len(frames) == 0 {
		t.Fatal("hovering drew no text on the heatmap")
	}
	return frames
}

// noDoubleDraw fails when a frame draws the same text twice at one place:
// the hovered row's label drawn bold over its plain self.
func noDoubleDraw(t *testing.T, frames [][]string) {
	t.Helper()
	for _, f := range frames {
		seen := map[string]bool{}
		for _, s := range f {
			if seen[s] {
				t.Errorf("label %q drawn twice in one frame", s)
			}
			seen[s] = true
		}
	}
}

func TestUIHeatmapShowsFaults(t *testing.T) {
	ctx := browser(t)

	// One dead HCA (node-0010/mlx5_1) among 1,024 nodes x 8 rails, with the
	// synthetic sweep's other faults around it (a slow node, a
	// half-bandwidth switch group, a flaky pair).
	t.Run("failed HCA 1024x8", func(t *testing.T) {
		start := time.Now()
		url := serveStatic(t, synth.Matrix(1024, 8), true)
		t.Logf("1,024 x 8 sweep built and served in %s", time.Since(start).Round(time.Millisecond))
		openDefault(t, ctx, url)
		dead := synth.Name(synth.DeadHCANode)
		pos := within(t, ctx, 5*time.Second, "the dead HCA's row", chromedp.Evaluate[int](
			fmt.Sprintf(`window.rdmamesh.grid.nodes.findIndex((n) => n.name === %q)`, dead)))
		cv := canvasRect(t, ctx)
		shot := screenshot(t, ctx, "14-heatmap-1024x8-failed-hca")
		failed := colourMask(t, shot, cv, failedRGB)
		// Where the page says the dead node's row and column are.
		at := within(t, ctx, 5*time.Second, "the dead HCA's position", chromedp.Evaluate[struct{ X, Y float64 }](
			fmt.Sprintf(`(() => { const r = window.rdmamesh.cellCenter(%d, 0), c = window.rdmamesh.cellCenter(0, %d); return {X: c.x, Y: r.y}; })()`, pos, pos)))
		rowY, colX := at.Y-cv.Y, at.X-cv.X
		// A line of failed cells across at least half the canvas, at least
		// minLinePx thick, through the dead node's row; and its column.
		const minLinePx = 3
		check := func(what string, lines []band, want float64) {
			for _, b := range lines {
				if b.start <= int(want)+2 && b.start+b.width >= int(want)-2 {
					t.Logf("%s of %s: %d px thick at %d (expected at %.0f)", what, dead, b.width, b.start, want)
					if b.width < minLinePx {
						t.Errorf("the %s of the failed HCA %s is %d px thick in the default view, want >= %d: the eye misses it", what, dead, b.width, minLinePx)
					}
					return
				}
			}
			t.Errorf("no %s of failed cells across half the canvas at %.0f px (lines at %v): the failed HCA %s is not visible", what, want, lines, dead)
		}
		check("row", failed.lines(true, int(cv.W/2)), rowY)
		check("column", failed.lines(false, int(cv.H/2)), colX)
		t.Logf("failure-colour pixels in the canvas: %d", failed.n)

		// Switch groups named on the axes, and hover draws each label once.
		frames := hoverFrames(t, ctx, pos, 600)
		groups := map[string]bool{}
		for _, s := range frames[len(frames)-1] {
			if name, _, _ := strings.Cut(s, "@"); strings.HasPrefix(name, "L") && len(name) == 3 {
				groups[name] = true
			}
		}
		if len(groups) < 8 {
			t.Errorf("only %d switch-group names on the axes at fit: %v", len(groups), frames[len(frames)-1])
		}
		noDoubleDraw(t, frames)

		// The suspect, clicked: the map zooms to it and highlights it.
		s0 := within(t, ctx, 5*time.Second, "scale", chromedp.Evaluate[float64](`Number(document.getElementById("heatmap").dataset.s)`))
		k := within(t, ctx, 5*time.Second, "find the HCA suspect", chromedp.Evaluate[int](fmt.Sprintf(
			`[...document.querySelectorAll("#suspects li")].findIndex((l) => l.textContent.includes(%q))`, dead+"/mlx5_1")))
		if k < 0 {
			t.Fatalf("no suspect names %s/mlx5_1", dead)
		}
		// With the mouse, as a person would: the pointer leaves the map.
		do(t, ctx, "click the HCA suspect", chromedp.Click(chromedp.CSS(fmt.Sprintf("#suspects li:nth-child(%d) .what", k+1))))
		poll[bool](t, ctx, "rail 1 zoomed to the suspect", fmt.Sprintf(`(() => {
			const d = document.getElementById("heatmap").dataset;
			return d.layer === "status:1" && d.focus === "%d" && Number(d.s) > %g && Number(d.oy) <= %d && %d < Number(d.oy) + Number(d.rows); })()`,
			pos, 4*s0, pos, pos))
		cv = canvasRect(t, ctx)
		shot = screenshot(t, ctx, "16-heatmap-1024x8-suspect-zoomed")
		at = within(t, ctx, 5*time.Second, "the suspect's row", chromedp.Evaluate[struct{ X, Y float64 }](
			fmt.Sprintf(`(() => { const p = window.rdmamesh.cellCenter(%d, %d); return {X: p.x, Y: p.y}; })()`, pos, pos)))
		failed = colourMask(t, shot, cv, failedRGB)
		check("zoomed row", failed.lines(true, int(cv.W/2)), at.Y-cv.Y)
		frames = hoverFrames(t, ctx, pos, pos+1)
		noDoubleDraw(t, frames)
	})
	runtime.GC() // the 1,024 x 8 matrix is 8 M cells

	// Every node's mlx5_2 down: a rail-wide fault. The worst of all rails
	// is then failed for every pair, a solid square that reads as a total
	// outage; the default view must show the one bad rail among good ones.
	t.Run("rail-wide fault 1024x8", func(t *testing.T) {
		url := serveStatic(t, synth.MatrixWith(1024, 8, synth.Faults{RailDown: 2}), true)
		openDefault(t, ctx, url)
		cv := canvasRect(t, ctx)
		shot := screenshot(t, ctx, "15-heatmap-1024x8-rail-2-down")
		failed := colourMask(t, shot, cv, failedRGB)
		ok := colourMask(t, shot, cv, okRGB)
		x0, y0, x1, y1, fill := failed.box()
		t.Logf("canvas %.0fx%.0f: %d failure-colour px in a %dx%d box (%.0f%% filled), %d ok-colour px",
			cv.W, cv.H, failed.n, x1-x0, y1-y0, 100*fill, ok.n)
		// The bad rail is one solid block of at least 100 x 100 px...
		if failed.n < 100*100 || fill < 0.8 {
			t.Errorf("the dead rail is not one solid block: %d px, %.0f%% of their bounding box", failed.n, 100*fill)
		}
		// ...among healthy rails: 7 of 8 rails are fine, so healthy must
		// cover at least 3 times the failed area (a solid failed square
		// has almost no healthy pixels).
		if ok.n < 3*failed.n {
			t.Errorf("healthy pixels %d < 3 x failed pixels %d: the default view reads as a total outage", ok.n, failed.n)
		}
		why := within(t, ctx, 5*time.Second, "why this view", chromedp.Text(chromedp.ID("view-why")))
		t.Logf("view note: %s", why)
		if !strings.Contains(why, "rail 2") {
			t.Errorf("the view does not say why it shows each rail: %q", why)
		}

		// Pointing into rail 2's heatmap names a failed pair of rail 2;
		// clicking opens rail 2's pairs, zoomed there.
		at := within(t, ctx, 5*time.Second, "rail 2's heatmap", chromedp.Evaluate[struct{ X, Y float64 }](`(() => {
			const c = document.getElementById("heatmap"), r = c.getBoundingClientRect();
			const p = JSON.parse(c.dataset.panels).find((p) => p[0] === 2);
			return {X: r.left + p[1] + 0.3 * p[3], Y: r.top + p[2] + 0.7 * p[4]}; })()`))
		do(t, ctx, "hover rail 2", chromedp.MouseEvent(chromedp.MouseMoved, at.X, at.Y))
		tip := poll[string](t, ctx, "the tooltip", `(() => { const e = document.getElementById("tooltip"); return !e.hidden && e.textContent; })()`)
		if !strings.Contains(tip, "rail 2: failed") {
			t.Errorf("tooltip over rail 2's heatmap: %q", tip)
		}
		do(t, ctx, "click rail 2", chromedp.MouseClickXY(at.X, at.Y))
		poll[bool](t, ctx, "rail 2's pairs, zoomed", `(() => { const d = document.getElementById("heatmap").dataset;
			return d.mode === "pairs" && d.layer === "status:2" && Number(d.rows) < 100; })()`)
	})
	runtime.GC()

	// A healthy sweep: every pair ok, the matrix filling its panel.
	t.Run("healthy 128x4", func(t *testing.T) {
		url := serveStatic(t, synth.MatrixWith(128, 4, synth.NoFaults), true)
		openDefault(t, ctx, url)
		cv := canvasRect(t, ctx)
		shot := screenshot(t, ctx, "17-heatmap-healthy")
		failed := colourMask(t, shot, cv, failedRGB)
		ok := colourMask(t, shot, cv, okRGB)
		x0, y0, x1, y1, _ := ok.box()
		t.Logf("canvas %.0fx%.0f: ok-colour box %dx%d, %d failure-colour px", cv.W, cv.H, x1-x0, y1-y0, failed.n)
		if failed.n > 0 {
			t.Errorf("%d failure-colour pixels in a healthy sweep", failed.n)
		}
		if float64(x1-x0) < 0.8*cv.W || float64(y1-y0) < 0.75*cv.H {
			t.Errorf("the matrix (%dx%d) does not fill the %.0fx%.0f canvas", x1-x0, y1-y0, cv.W, cv.H)
		}
		if wrap := within(t, ctx, 5*time.Second, "panel width", chromedp.Evaluate[float64](
			`document.getElementById("heatmap-wrap").clientWidth`)); cv.W < wrap-1 {
			t.Errorf("the canvas is %.0f px wide in a %.0f px panel", cv.W, wrap)
		}

		// A smaller window: the canvas follows its panel and still fills it.
		t.Cleanup(func() { do(t, ctx, "restore the window size", chromedp.EmulateViewport(1600, 1000)) })
		do(t, ctx, "a smaller window", chromedp.EmulateViewport(1100, 760))
		poll[bool](t, ctx, "the canvas to follow its panel", fmt.Sprintf(`(() => {
			const c = document.getElementById("heatmap").getBoundingClientRect();
			return c.width < %g && c.width === document.getElementById("heatmap-wrap").clientWidth && c.bottom <= innerHeight; })()`, cv.W))
		cv = canvasRect(t, ctx)
		shot = screenshot(t, ctx, "17b-heatmap-healthy-1100x760")
		ok = colourMask(t, shot, cv, okRGB)
		x0, y0, x1, y1, _ = ok.box()
		t.Logf("canvas %.0fx%.0f at 1100x760: ok-colour box %dx%d", cv.W, cv.H, x1-x0, y1-y0)
		if float64(x1-x0) < 0.8*cv.W || float64(y1-y0) < 0.7*cv.H {
			t.Errorf("at 1100x760 the matrix (%dx%d) does not fill the %.0fx%.0f canvas", x1-x0, y1-y0, cv.W, cv.H)
		}
	})
}
