//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rdmamesh/rdmamesh/cluster"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
)

// The demo's faults: a dead HCA (the cell the test hovers), a whole switch
// group (leaf-03 = node-17..24) at 40% bandwidth on rail 2, and a slow node.
var faults = []string{"node-03/mlx5_1:down", "node-17~node-24/mlx5_2:bw=0.4", "node-28:lat=5x"}

const (
	demoNodes = 32
	demoRails = 4
)

func demo(t *testing.T) *cluster.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	p := probe.DefaultTestParams()
	p.LatencyIters = 200
	// TimeScale 10 stretches a sweep to several seconds, so the page is
	// certain to show a half-filled heatmap on a fast machine too; at 1 the
	// sweep could end between two of the page's loads.
	cl, err := cluster.Start(ctx, cluster.Options{Nodes: demoNodes, Rails: demoRails, Preset: "ib-8x400", Seed: 3,
		Faults: faults, TimeScale: 10, Listen: "127.0.0.1:0", Mode: "full", Params: p, PairTimeout: 5 * time.Second,
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	return cl
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func getJSON[T any](t *testing.T, u string) T {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var v T
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %s", u, res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	return v
}

// sweepToEnd starts a sweep over the API and waits for it to finish.
func sweepToEnd(t *testing.T, base string) api.SweepInfo {
	t.Helper()
	res, err := http.Post(base+"/api/v1/sweeps", "application/json", bytes.NewReader([]byte(`{"mode":"full"}`)))
	if err != nil {
		t.Fatal(err)
	}
	var info api.SweepInfo
	err = json.NewDecoder(res.Body).Decode(&info)
	res.Body.Close()
	if err != nil {
		t.Fatalf("start sweep: %s: %v", res.Status, err)
	}
	if res.StatusCode != http.StatusAccepted {
		t.Fatalf("start sweep: %s", res.Status)
	}
	wait.Within(t, 60*time.Second, "sweep "+info.ID+" to end", func() bool {
		info = getJSON[api.SweepInfo](t, base+"/api/v1/sweeps/"+info.ID)
		return info.State != api.SweepRunning
	})
	return info
}

type cell struct {
	I, J     int
	Src, Dst string
}

type pairAnswer struct {
	Forward []struct {
		Rail    int    `json:"rail"`
		Verdict string `json:"verdict"`
		Error   *struct {
			Cause string `json:"cause"`
			Fix   string `json:"fix"`
		} `json:"error"`
	} `json:"forward"`
}

func TestUI(t *testing.T) {
	start := time.Now()
	cl := demo(t)
	first := sweepToEnd(t, cl.URL)
	t.Logf("demo up and first sweep %s done in %s", first.ID, time.Since(start).Round(time.Millisecond))

	ctx := browser(t)
	do(t, ctx, "open the UI", chromedp.Navigate(cl.URL+"/"))
	poll[bool](t, ctx, "the first heatmap paint", `document.getElementById("heatmap").dataset.painted === "1"`)
	paint := within(t, ctx, 5*time.Second, "first paint time", chromedp.Evaluate[float64](`window.rdmamesh.firstPaintMs`))
	t.Logf("first heatmap paint %.0f ms after navigation (%d nodes x %d rails)", paint, demoNodes, demoRails)
	summary := within(t, ctx, 5*time.Second, "summary", chromedp.Text(chromedp.ID("summary")))
	if !strings.Contains(summary, "UNHEALTHY") || !strings.Contains(summary, fmt.Sprintf("%d nodes", demoNodes)) {
		t.Fatalf("summary %q", summary)
	}
	screenshot(t, ctx, "01-heatmap-status-all-rails")

	// Hover a failed cell: the tooltip must name the pair, the verdict and
	// the cause the API reports for it.
	c := poll[cell](t, ctx, "a failed cell", `(() => { const c = window.rdmamesh.findCode(5); return c && {I: c.i, J: c.j, Src: c.src, Dst: c.dst}; })()`)
	pair := getJSON[pairAnswer](t, cl.URL+"/api/v1/sweeps/"+first.ID+"/pair?src="+url.QueryEscape(c.Src)+"&dst="+url.QueryEscape(c.Dst))
	var cause, fix string
	for _, f := range pair.Forward {
		if f.Error != nil {
			cause, fix = f.Error.Cause, f.Error.Fix
			break
		}
	}
	if cause == "" {
		t.Fatalf("pair %s→%s has no failed cell with a cause: %+v", c.Src, c.Dst, pair)
	}
	if !strings.Contains(c.Src+c.Dst, "node-03") {
		t.Fatalf("the first failed cell is %s→%s; the only down HCA is node-03's", c.Src, c.Dst)
	}
	xy := within(t, ctx, 5*time.Second, "cell position",
		chromedp.Evaluate[struct{ X, Y float64 }](fmt.Sprintf(`(() => { const p = window.rdmamesh.cellCenter(%d, %d); return {X: p.x, Y: p.y}; })()`, c.I, c.J)))
	do(t, ctx, "hover the failed cell", chromedp.MouseEvent(chromedp.MouseMoved, xy.X, xy.Y))
	tip := poll[string](t, ctx, "the tooltip with figures",
		`(() => { const e = document.getElementById("tooltip"); return !e.hidden && e.textContent.includes("cause:") && e.textContent; })()`)
	for _, want := range []string{c.Src + " → " + c.Dst, "failed", cause} {
		if !strings.Contains(tip, want) {
			t.Fatalf("tooltip %q lacks %q", tip, want)
		}
	}
	screenshot(t, ctx, "02-tooltip-failed-cell")

	// Click it: the drill-down shows the cause and the fix.
	do(t, ctx, "click the failed cell", chromedp.MouseClickXY(xy.X, xy.Y))
	drill := poll[string](t, ctx, "the drill-down",
		`(() => { const d = document.getElementById("drill"); return d.open && d.textContent.includes("Cause:") && d.textContent; })()`)
	for _, want := range []string{"Cause: " + cause, "Latency distribution", "Retest history", "Bandwidth against line rate"} {
		if !strings.Contains(drill, want) {
			t.Fatalf("drill-down lacks %q: %.600s", want, drill)
		}
	}
	if fix != "" && !strings.Contains(drill, "Fix: "+fix) {
		t.Fatalf("drill-down lacks the fix %q", fix)
	}
	screenshot(t, ctx, "03-drill-down")
	do(t, ctx, "close the drill-down", chromedp.Click(chromedp.ID("drill-close")))

	// The other views of the same sweep.
	for _, v := range []struct{ name, metric, rail, mode string }{
		{"04-heatmap-p50-all-rails", "p50", "all", "pairs"},
		{"05-heatmap-bandwidth-rail-2", "bw", "2", "pairs"},
		{"06-rollup-switch-groups-rail-2", "status", "2", "groups"},
		{"07-rollup-hcas", "status", "all", "hcas"},
	} {
		choose(t, ctx, "metric", v.metric)
		choose(t, ctx, "rail", v.rail)
		choose(t, ctx, "mode", v.mode)
		poll[bool](t, ctx, v.name, fmt.Sprintf(`(() => { const d = document.getElementById("heatmap").dataset; return d.layer === %q && d.mode === %q; })()`,
			v.metric+":"+v.rail, v.mode))
		screenshot(t, ctx, v.name)
	}
	choose(t, ctx, "metric", "status")
	choose(t, ctx, "rail", "all")
	choose(t, ctx, "mode", "pairs")

	// Zoom, fit, and a suspect pointed at on the map.
	s0 := within(t, ctx, 5*time.Second, "scale", chromedp.Evaluate[float64](`Number(document.getElementById("heatmap").dataset.s)`))
	do(t, ctx, "zoom in", chromedp.Click(chromedp.ID("zoom-in")))
	poll[bool](t, ctx, "a larger scale", fmt.Sprintf(`Number(document.getElementById("heatmap").dataset.s) > %g`, s0))
	do(t, ctx, "fit", chromedp.Click(chromedp.ID("zoom-fit")))
	poll[bool](t, ctx, "the fitted scale", fmt.Sprintf(`Number(document.getElementById("heatmap").dataset.s) === %g`, s0))
	within(t, ctx, 5*time.Second, "click the HCA suspect", chromedp.Evaluate[bool](`(() => {
		const li = [...document.querySelectorAll("#suspects li")].find((l) => l.textContent.includes("node-03/mlx5_1"));
		if (!li) return false;
		li.click(); return true; })()`))
	poll[bool](t, ctx, "rail 1 with node-03 highlighted", `document.getElementById("heatmap").dataset.layer === "status:1" && document.getElementById("rail").value === "1"`)
	screenshot(t, ctx, "07b-suspect-hca-on-rail-1")
	choose(t, ctx, "rail", "all")

	// Nodes: every worker, and node-03's dead port.
	do(t, ctx, "open the nodes tab", chromedp.Navigate(cl.URL+"/#nodes"))
	nodes := poll[string](t, ctx, "the nodes table",
		fmt.Sprintf(`(() => { const t = document.getElementById("nodes"); return t.tBodies[0].querySelectorAll("tr.node-first").length >= %d && t.textContent; })()`, demoNodes))
	if !strings.Contains(nodes, "node-03") || !strings.Contains(nodes, "DOWN") {
		t.Fatalf("nodes table does not show node-03's DOWN port: %.400s", nodes)
	}
	within(t, ctx, 5*time.Second, "only problems", chromedp.Evaluate[bool](`(() => { const b = document.getElementById("node-problems"); b.click(); return b.checked; })()`))
	poll[bool](t, ctx, "the problem filter", `!document.getElementById("nodes").textContent.includes("node-02")`)
	screenshot(t, ctx, "08-nodes-with-problems")

	// Start a sweep from the form and watch it run.
	do(t, ctx, "open the sweeps tab", chromedp.Navigate(cl.URL+"/#sweeps"))
	poll[bool](t, ctx, "the sweep history", `document.querySelectorAll("#history tbody tr").length >= 1 && !document.getElementById("view-sweeps").hidden`)
	choose(t, ctx, "f-mode", "full")
	do(t, ctx, "start a sweep", chromedp.Click(chromedp.ID("start")))
	second := poll[string](t, ctx, "live progress of the new sweep",
		fmt.Sprintf(`(() => { const p = window.rdmamesh.progress.find((e) => e.id !== %q && e.name === "progress" && e.state === "running"); return p && p.id; })()`, first.ID))
	progress := within(t, ctx, 5*time.Second, "progress text", chromedp.Text(chromedp.ID("progress-text")))
	if !strings.Contains(progress, "round ") || !strings.Contains(progress, " of ") {
		t.Fatalf("progress text %q", progress)
	}
	t.Logf("sweep %s started from the form: %s", second, progress)
	within(t, ctx, 5*time.Second, "back to the heatmap", chromedp.Evaluate[bool](`location.hash = "#heatmap"; true`))
	poll[bool](t, ctx, "a partly filled heatmap", fmt.Sprintf(`(() => {
		const l = window.rdmamesh.loads.filter((x) => x.sweep === %q);
		return l.some((x) => x.untested > 0 && x.untested < x.pairs); })()`, second))
	screenshot(t, ctx, "09-heatmap-during-sweep")
	poll[bool](t, ctx, "the end of the new sweep", fmt.Sprintf(`window.rdmamesh.progress.some((e) => e.id === %q && e.name === "end")`, second))
	poll[bool](t, ctx, "the finished sweep's heatmap", fmt.Sprintf(`(() => { const l = window.rdmamesh.loads.filter((x) => x.sweep === %q); return l.length && l[l.length - 1].untested === 0; })()`, second))
	loads := within(t, ctx, 5*time.Second, "layer loads", chromedp.Evaluate[[]struct {
		Sweep    string `json:"sweep"`
		Untested int    `json:"untested"`
	}](`window.rdmamesh.loads`))
	events := within(t, ctx, 5*time.Second, "progress events", chromedp.Evaluate[int](fmt.Sprintf(`window.rdmamesh.progress.filter((e) => e.id === %q).length`, second)))
	partial := 0
	for _, l := range loads {
		if l.Sweep == second && l.Untested > 0 {
			partial++
		}
	}
	t.Logf("sweep %s: %d progress events, %d heatmap loads while cells were still untested", second, events, partial)
	if events < 2 || partial < 1 {
		t.Fatalf("no live progress: %d events, %d partial heatmaps", events, partial)
	}
	screenshot(t, ctx, "10-heatmap-after-second-sweep")

	// Compare the two sweeps.
	within(t, ctx, 5*time.Second, "open the sweeps tab", chromedp.Evaluate[bool](`location.hash = "#sweeps"; true`))
	within(t, ctx, 10*time.Second, "pick A and B", chromedp.Poll[bool](fmt.Sprintf(`(() => {
		const a = document.querySelector('input[aria-label="A: %s"]'), b = document.querySelector('input[aria-label="B: %s"]');
		if (!a || !b) return false;
		a.click(); b.click(); return !document.getElementById("diff-run").disabled; })()`, first.ID, second)))
	do(t, ctx, "compare", chromedp.Click(chromedp.ID("diff-run")))
	diff := poll[string](t, ctx, "the diff", `(() => { const d = document.getElementById("diff").textContent; return d.includes("worse") && d; })()`)
	if !strings.Contains(diff, first.ID) || !strings.Contains(diff, second) {
		t.Fatalf("diff does not name both sweeps: %.300s", diff)
	}
	screenshot(t, ctx, "11-sweeps-history-and-diff")
	t.Logf("e2e done in %s", time.Since(start).Round(time.Millisecond))
}

// choose sets a <select> or <input> as a person would and fires change.
func choose(t *testing.T, ctx context.Context, id, value string) {
	t.Helper()
	ok := within(t, ctx, 10*time.Second, "choose "+id, chromedp.Evaluate[bool](fmt.Sprintf(`(() => {
		const e = document.getElementById(%q);
		if (!e) return false;
		e.value = %q;
		e.dispatchEvent(new Event("change", { bubbles: true }));
		return e.value === %q; })()`, id, value, value)))
	if !ok {
		t.Fatalf("could not set #%s to %q", id, value)
	}
}
