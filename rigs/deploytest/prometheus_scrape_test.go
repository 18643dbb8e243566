package deploytest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Debian's Prometheus, run as Debian runs it (the prometheus user, its own
// storage directory), scrapes a running demo and loads the shipped rules:
// the seam where a metric name, a label or a rule's syntax breaks.
func TestPrometheusScrapesTheDemo(t *testing.T) {
	prom := needTool(t, "prometheus", "prometheus")
	bin := cli(t).Path
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	demoURL := startDemo(t, ctx, bin)
	rules, err := os.ReadFile(repo(t, "deploy", "prometheus", "rdmamesh-rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(demoURL)
	if err != nil {
		t.Fatal(err)
	}
	api, exited, _ := startPrometheus(t, ctx, prom, map[string][]byte{"rdmamesh-rules.yaml": rules}, func(dir string) string {
		return fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - %s
scrape_configs:
  - job_name: rdmamesh-demo
    static_configs:
      - targets: ['%s']
`, filepath.Join(dir, "rdmamesh-rules.yaml"), u.Host)
	})
	waitFor := func(what string, cond func() (bool, string)) {
		t.Helper()
		poll(t, ctx, exited, what, cond)
	}

	waitFor("the demo target to be up", func() (bool, string) {
		var r struct {
			Data struct {
				ActiveTargets []struct {
					Health    string `json:"health"`
					LastError string `json:"lastError"`
				} `json:"activeTargets"`
			} `json:"data"`
		}
		if err := getJSON(ctx, api+"targets", &r); err != nil {
			return false, err.Error()
		}
		if len(r.Data.ActiveTargets) == 0 {
			return false, "no target yet"
		}
		if tg := r.Data.ActiveTargets[0]; tg.Health != "up" {
			return false, tg.Health + " " + tg.LastError
		}
		return true, ""
	})
	waitFor("every rule group to load and evaluate", func() (bool, string) {
		var r struct {
			Data struct {
				Groups []struct {
					Name  string `json:"name"`
					Rules []struct {
						Name      string `json:"name"`
						Health    string `json:"health"`
						LastError string `json:"lastError"`
					} `json:"rules"`
				} `json:"groups"`
			} `json:"data"`
		}
		if err := getJSON(ctx, api+"rules", &r); err != nil {
			return false, err.Error()
		}
		if len(r.Data.Groups) != 2 {
			return false, fmt.Sprintf("%d groups loaded", len(r.Data.Groups))
		}
		for _, g := range r.Data.Groups {
			for _, rl := range g.Rules {
				if rl.Health != "ok" {
					return false, fmt.Sprintf("%s/%s: %s %s", g.Name, rl.Name, rl.Health, rl.LastError)
				}
			}
		}
		return true, ""
	})
	for _, q := range []string{"rdmamesh_build_info", "rdmamesh_members", "rdmamesh_live_enabled == 1"} {
		waitFor(q+" in Prometheus", func() (bool, string) {
			var r struct {
				Data struct {
					Result []json.RawMessage `json:"result"`
				} `json:"data"`
			}
			if err := getJSON(ctx, api+"query?query="+url.QueryEscape(q), &r); err != nil {
				return false, err.Error()
			}
			return len(r.Data.Result) > 0, "no series yet"
		})
	}
}

var demoURLLine = regexp.MustCompile(`web UI: (http://\S+)/`)

// startDemo runs `rdmamesh demo` on a loopback port of its choosing and
// returns its URL once it printed it.
func startDemo(t *testing.T, ctx context.Context, bin string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, "demo", "--nodes", "4", "--listen", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() { // ends when the demo's stdout closes
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := demoURLLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case u := <-found:
		return u
	case <-ctx.Done():
		t.Fatal("the demo never printed its URL")
		return ""
	}
}

// startPrometheus runs Debian's prometheus (bin) as Debian runs it: the
// prometheus user, its own storage directory, files (name → content) and
// the config config(dir) beside it in dir. It returns the server's API
// URL, a channel closed when it exits and stop; it is stopped by stop or
// when tb ends, and its log shown if tb failed.
func startPrometheus(tb testing.TB, ctx context.Context, bin string, files map[string][]byte, config func(dir string) string) (api string, exited <-chan struct{}, stop func()) {
	tb.Helper()
	// Not tb.TempDir: its parent is private to root, and the prometheus
	// user must read the config and rules, as it reads /etc/prometheus.
	dir, err := os.MkdirTemp("", "deploytest-prometheus-") //nolint:usetesting // the prometheus user cannot reach into tb.TempDir's 0700 parent
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	for name, b := range files {
		writeFile(tb, filepath.Join(dir, name), b)
	}
	writeFile(tb, filepath.Join(dir, "prometheus.yml"), []byte(config(dir)))
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		tb.Fatal(err)
	}
	addr := freeLoopbackAddr(tb)
	cmd := exec.CommandContext(ctx, bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+data, "--web.listen-address="+addr)
	asPrometheusUser(tb, cmd, data)
	logs := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() { // owns cmd.Wait; stop waits for it
		_ = cmd.Wait()
		close(done)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			<-done
			if tb.Failed() {
				tb.Logf("prometheus log:\n%s", logs.String())
			}
		})
	}
	tb.Cleanup(stop)
	return "http://" + addr + "/api/v1/", done, stop
}

// freeLoopbackAddr asks the kernel for a free port. Prometheus cannot be
// handed a listener, so the port is closed again before it binds: another
// process could take it in between, which a test run survives by failing
// loudly rather than by talking to the wrong server (it checks the rules).
func freeLoopbackAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// asPrometheusUser drops to Debian's prometheus user when the test runs as
// root and the package created it, as the packaged service does.
func asPrometheusUser(tb testing.TB, cmd *exec.Cmd, data string) {
	tb.Helper()
	if os.Geteuid() != 0 {
		return
	}
	u, err := user.Lookup("prometheus")
	if err != nil {
		return
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(data, uid, gid); err != nil {
		tb.Fatal(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
}

func writeFile(tb testing.TB, path string, b []byte) {
	tb.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
}

func getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// poll checks cond until it holds, failing with its last explanation when
// ctx ends or the process under test exits.
func poll(tb testing.TB, ctx context.Context, exited <-chan struct{}, what string, cond func() (bool, string)) {
	tb.Helper()
	last := ""
	for {
		ok, why := cond()
		if ok {
			return
		}
		last = why
		select {
		case <-ctx.Done():
			tb.Fatalf("waiting for %s: %s", what, last)
		case <-exited:
			tb.Fatalf("waiting for %s: the process exited (%s)", what, last)
		case <-time.After(200 * time.Millisecond): // poll interval of a condition wait
		}
	}
}
