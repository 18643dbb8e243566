//go:build e2e

// Package e2e drives the web UI in Debian's headless Chromium with chromedp:
// against an in-process demo with faults injected (TestUI) and against a
// synthetic 1,024-node, 8-rail sweep (BenchmarkFirstPaint). Build tag e2e
// keeps it out of `go test ./...`; `make e2e` and `make bench-ui` run it.
package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// outDir is where screenshots go: bin/e2e at the repository root.
func outDir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("E2E_OUT")
	if dir == "" {
		dir = filepath.Join("..", "..", "bin", "e2e")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func chromium(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	tb.Skip("no Chromium on PATH: `make e2e` installs Debian's chromium package")
	return ""
}

// browser starts headless Chromium with exactly the flags below (chromedp
// adds only its debugging port and a temporary profile) and returns a tab
// context; the browser exits when the test ends.
func browser(tb testing.TB) context.Context {
	tb.Helper()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium(tb)),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.NoFirstRun,
	)
	ctx, cancel := chromedp.NewContext(alloc, chromedp.WithLogf(tb.Logf))
	tb.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// The first Run starts the browser; it must not carry a timeout.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1600, 1000)); err != nil {
		tb.Fatalf("starting chromium: %v", err)
	}
	failOnPageErrors(tb, ctx)
	return ctx
}

// failOnPageErrors fails the test, when it ends, if the page threw an
// uncaught exception or rejected a promise nobody handled: a broken click
// handler shows nowhere else.
func failOnPageErrors(tb testing.TB, ctx context.Context) {
	tb.Helper()
	wctx, stop := context.WithCancel(ctx)
	thrown := chromedp.Events(wctx, cdpruntime.ExceptionThrown)
	var mu sync.Mutex
	var errs []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range thrown {
			if err != nil {
				return
			}
			msg := ev.ExceptionDetails.Text
			if ex := ev.ExceptionDetails.Exception; ex != nil && ex.Description != "" {
				msg += " " + ex.Description
			}
			mu.Lock()
			errs = append(errs, msg)
			mu.Unlock()
		}
	}()
	tb.Cleanup(func() {
		stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, e := range errs {
			tb.Errorf("page error: %s", e)
		}
	})
}

// within runs fn with a context bounded by d, so one stuck step fails the
// test with a message instead of hanging it.
func within[T any](tb testing.TB, ctx context.Context, d time.Duration, what string, a chromedp.Action[T]) T {
	tb.Helper()
	c, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	v, err := chromedp.Run(c, a)
	if err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
	return v
}

func do(tb testing.TB, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	tb.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
}

// poll waits for a JavaScript expression to become truthy and returns it.
func poll[T any](tb testing.TB, ctx context.Context, what, expr string) T {
	tb.Helper()
	return within(tb, ctx, 40*time.Second, "waiting for "+what,
		chromedp.Poll[T](expr, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(35*time.Second)))
}

// screenshot saves the viewport as bin/e2e/name.png and returns the PNG.
func screenshot(tb testing.TB, ctx context.Context, name string) []byte {
	tb.Helper()
	png := within(tb, ctx, 30*time.Second, "screenshot "+name, chromedp.CaptureScreenshot())
	path := filepath.Join(outDir(tb), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("screenshot %s (%d KB)", path, len(png)/1024)
	return png
}
