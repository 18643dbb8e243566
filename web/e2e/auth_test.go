//go:build e2e

package e2e

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/rdmamesh/rdmamesh/cluster"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// With auth on, the page asks for the token once, and everything after it
// (the start form's POST, the event stream) carries it.
func TestUIWithToken(t *testing.T) {
	const token = "e2e-secret-token"
	ctx0, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := probe.DefaultTestParams()
	p.LatencyIters = 200
	cl, err := cluster.Start(ctx0, cluster.Options{Nodes: 8, Rails: 2, Preset: "roce-2x100", Seed: 5, TimeScale: 1,
		Listen: "127.0.0.1:0", Mode: "full", Params: p, PairTimeout: 5 * time.Second, Token: token,
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	if res, err := http.Get(cl.URL + "/api/v1/sweeps"); err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the API answers without a token: %v %v", res, err)
	} else {
		res.Body.Close()
	}

	ctx := browser(t)
	// The operator types the token into the page's prompt.
	dctx, stop := context.WithCancel(ctx)
	dialogs := chromedp.Events(dctx, page.JavascriptDialogOpening)
	var prompts atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			prompts.Add(1)
			t.Logf("dialog: %s", ev.Message)
			if _, err := chromedp.Call(dctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true, PromptText: token}); err != nil && dctx.Err() == nil {
				t.Errorf("answer the token prompt: %v", err)
			}
		}
	}()
	t.Cleanup(func() {
		stop()
		<-done
	})

	do(t, ctx, "open the sweeps tab", chromedp.Navigate(cl.URL+"/#sweeps"))
	poll[bool](t, ctx, "the page to load with the token", `document.getElementById("history").textContent.includes("No sweeps yet")`)
	choose(t, ctx, "f-mode", "quick")
	do(t, ctx, "start a sweep", chromedp.Click(chromedp.ID("start")))
	id := poll[string](t, ctx, "the sweep to end", `(() => { const e = window.rdmamesh.progress.find((e) => e.name === "end"); return e && e.id; })()`)
	running := within(t, ctx, 5*time.Second, "progress events", chromedp.Evaluate[int](`window.rdmamesh.progress.filter((e) => e.name === "progress").length`))
	if running < 1 {
		t.Fatalf("no progress event for %s before its end", id)
	}
	if n := prompts.Load(); n != 1 {
		t.Fatalf("the token was asked for %d times, want once", n)
	}
	poll[bool](t, ctx, "the heatmap of the new sweep", `window.rdmamesh.grid && window.rdmamesh.grid.sweep !== "" && document.getElementById("heatmap").dataset.painted === "1"`)
	t.Logf("sweep %s started and followed with the bearer token (%d progress events)", id, running)
}
