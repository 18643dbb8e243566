package deploytest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator"
	"github.com/rdmamesh/rdmamesh/metrics"
	"github.com/rdmamesh/rdmamesh/rigs/scale"
	"github.com/rdmamesh/rdmamesh/web"
)

// BenchmarkPrometheusScrapesAfterSweep: a coordinator that has just
// finished a control sweep of BENCH_PROM_SWEEP_NODES x 8 (default 4,096:
// 134 M cells) is scraped twice, with Prometheus's default timeout of 10 s:
//   - as `rdmamesh coordinator` serves it, its preparer (the web's first
//     views, then the result metrics, then the p50 layer) started as the
//     sweep ends, and a scrape at that very moment (prepared-scrape-s);
//   - by Debian's Prometheus, run as Debian runs it, against a fresh
//     collector with no preparer, whose first scrape walks every cell
//     itself (first-scrape-s; it must come back up).
//
// Set up by scale.SweepBench (BENCH_PROM_SWEEP_NODES, the memory limit
// and guard).
// Run: BENCH_PROM_SWEEP=1 go test -run '^$' -bench PrometheusScrapesAfterSweep -benchtime 1x ./rigs/deploytest/
func BenchmarkPrometheusScrapesAfterSweep(b *testing.B) {
	n, ctx := scale.SweepBench(b, "BENCH_PROM_SWEEP")
	prom := needTool(b, "prometheus", "prometheus")
	var scraped, prepared float64
	res, err := scale.Run(ctx, scale.Config{Nodes: n, Control: true, AfterSweep: func(co *coordinator.Coordinator, _ string) error {
		var err error
		if prepared, err = scrapeWhilePreparing(ctx, co); err != nil {
			return err
		}
		scraped, err = scrapeAfterSweep(b, ctx, prom, co)
		return err
	}})
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("%d x %d control sweep, %d cells: a scrape as it ended, its preparer running, took %.2f s; "+
		"Prometheus's first scrape of a collector with no preparer took %.2f s (scrape_timeout 10 s)\n",
		res.Nodes, res.Rails, res.Cells, prepared, scraped)
	b.ReportMetric(prepared, "prepared-scrape-s")
	b.ReportMetric(scraped, "first-scrape-s")
}

// scrapeWhilePreparing serves co as `rdmamesh coordinator` does, starts its
// preparer, and at once scrapes /metrics with a 10 s timeout, as
// Prometheus would at the sweep's end; it returns how long the scrape took.
func scrapeWhilePreparing(ctx context.Context, co *coordinator.Coordinator) (_ float64, err error) {
	prepCtx, stopPrep := context.WithCancel(ctx)
	reg := metrics.NewRegistry()
	results := metrics.NewCoordinator(co, metrics.CoordinatorOptions{Context: prepCtx})
	reg.MustRegister(results)
	ws := web.New(co, web.Options{Metrics: metrics.Handler(reg), Prepare: results.PrepareNewest})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		stopPrep()
		return 0, err
	}
	srv := &http.Server{Handler: ws.Handler()}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	prepared := make(chan struct{})
	go func() { defer close(prepared); ws.Prepare(prepCtx, web.DefaultPrepareEvery) }()
	defer func() {
		stopPrep()
		<-prepared
		srv.Close()
		if serr := <-served; !errors.Is(serr, http.ErrServerClosed) && err == nil {
			err = fmt.Errorf("serving /metrics: %w", serr)
		}
	}()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, "http://"+ln.Addr().String()+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return time.Since(start).Seconds(), fmt.Errorf("a scrape as the sweep ended, with the preparers running: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	took := time.Since(start).Seconds()
	switch {
	case err != nil:
		return took, err
	case resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("rdmamesh_result_info")):
		return took, fmt.Errorf("a scrape as the sweep ended: %s without the result metrics", resp.Status)
	}
	return took, nil
}

// scrapeAfterSweep serves co's /metrics as the coordinator command does
// (web, with the coordinator's collector), lets Prometheus scrape it once
// and returns that scrape's duration in seconds.
func scrapeAfterSweep(b *testing.B, ctx context.Context, prom string, co *coordinator.Coordinator) (_ float64, err error) {
	b.Helper()
	reg := metrics.NewRegistry()
	reg.MustRegister(metrics.NewCoordinator(co, metrics.CoordinatorOptions{}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	srv := &http.Server{Handler: web.New(co, web.Options{Metrics: metrics.Handler(reg)}).Handler()}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		srv.Close()
		if serr := <-served; !errors.Is(serr, http.ErrServerClosed) && err == nil {
			err = fmt.Errorf("serving /metrics: %w", serr)
		}
	}()
	api, exited, stopProm := startPrometheus(b, ctx, prom, nil, func(string) string {
		return fmt.Sprintf(`global:
  scrape_interval: 15s
  scrape_timeout: 10s
scrape_configs:
  - job_name: rdmamesh-coordinator
    static_configs:
      - targets: ['%s']
`, ln.Addr().String())
	})
	defer stopProm() // before the harness stops the coordinator it scrapes
	var health, lastErr string
	var took float64
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	poll(b, wctx, exited, "Prometheus's first scrape of the coordinator", func() (bool, string) {
		var r struct {
			Data struct {
				ActiveTargets []struct {
					Health             string  `json:"health"`
					LastError          string  `json:"lastError"`
					LastScrapeDuration float64 `json:"lastScrapeDuration"`
				} `json:"activeTargets"`
			} `json:"data"`
		}
		if err := getJSON(wctx, api+"targets", &r); err != nil {
			return false, err.Error()
		}
		for _, tg := range r.Data.ActiveTargets {
			health, lastErr, took = tg.Health, tg.LastError, tg.LastScrapeDuration
			return tg.Health != "unknown", tg.Health
		}
		return false, "no target yet"
	})
	if health != "up" {
		return took, fmt.Errorf("the first scrape after the sweep was %s after %.2f s: %s", health, took, lastErr)
	}
	return took, nil
}
