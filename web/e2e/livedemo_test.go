//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rdmamesh/rdmamesh/cluster"
	"github.com/rdmamesh/rdmamesh/coordinator"
	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
)

// TestUILiveDemo is the always-on mesh on the real demo: 32 simulated
// nodes with the always-on mesh at the shipped defaults (10 s windows, 50
// probes/s per HCA), a port taken down at run time, and the suspect in the
// browser's Live view and in /metrics within 60 s, with no sweep started.
// TestUILiveView covers the page's details against a scripted backend.
func TestUILiveDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl, err := cluster.Start(ctx, cluster.Options{Nodes: demoNodes, Rails: demoRails, Preset: "ib-8x400", Seed: 5,
		Listen: "127.0.0.1:0", Live: coordinator.LiveOptions{Enabled: true},
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	bctx := browser(t)
	openDefault(t, bctx, cl.URL)
	poll[bool](t, bctx, "the Live entry in the sweep list",
		`document.getElementById("sweep").options[0].value === "live"`)
	pickLive := `(() => { const s = document.getElementById("sweep"); if (s.value !== "live") { s.value = "live"; s.dispatchEvent(new Event("change")); } return true; })()`
	waitEval(t, bctx, 90*time.Second, "a healthy live window of every node", pickLive+` && window.rdmamesh.grid && window.rdmamesh.grid.sweep === "live"`+
		` && window.rdmamesh.grid.healthy === true && document.getElementById("live-text").textContent.includes("32 of 32 nodes probing")`)

	const node, dev = "node-11", "mlx5_2"
	if err := cl.Inject([]string{node + "/" + dev + ":down"}); err != nil {
		t.Fatal(err)
	}
	injected := time.Now()
	want := node + "/" + dev
	var inPage, inMetrics time.Duration
	wait.Until(t, 60*time.Second, "the downed port in the Live view and /metrics", func() error {
		if inPage == 0 && evalBool(t, bctx, `document.getElementById("suspects").textContent.includes("`+want+`")`+
			` && window.rdmamesh.grid.sweep === "live" && window.rdmamesh.grid.healthy === false`) {
			inPage = time.Since(injected)
		}
		if inMetrics == 0 && metricsName(t, cl.URL, node, dev) {
			inMetrics = time.Since(injected)
		}
		if inPage == 0 || inMetrics == 0 {
			return fmt.Errorf("the Live view after %v, /metrics after %v (0 = not yet)", inPage, inMetrics)
		}
		return nil
	})
	t.Logf("port down on %s: suspect in the Live view after %v, in /metrics after %v", want, inPage.Round(100*time.Millisecond), inMetrics.Round(100*time.Millisecond))
	screenshot(t, bctx, "23-live-demo-suspect")
	if s := cl.Coord.Sweeps(); len(s) != 0 {
		t.Errorf("a sweep ran: %+v", s)
	}
}

// metricsName says whether /metrics lists the HCA as a live suspect.
func metricsName(t *testing.T, base, node, dev string) bool {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET /metrics: %s %v", res.Status, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "rdmamesh_live_suspect_bad_cells{") && strings.Contains(l, `node="`+node+`"`) &&
			strings.Contains(l, `device="`+dev+`"`) {
			return true
		}
	}
	return false
}

func evalBool(t *testing.T, ctx context.Context, expr string) bool {
	t.Helper()
	return within(t, ctx, 10*time.Second, "evaluate "+expr, chromedp.Evaluate[bool](expr))
}

// waitEval is poll with a longer bound: the first live window takes a plan
// commit and a whole window at the shipped 10 s.
func waitEval(t *testing.T, ctx context.Context, d time.Duration, what, expr string) {
	t.Helper()
	wait.Within(t, d, what, func() bool { return evalBool(t, ctx, expr) })
}
