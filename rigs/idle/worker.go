package idle

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// workerName is the measured worker's node name in the pool.
const workerName = "idle-worker"

// worker is the measured `rdmamesh worker` process.
type worker struct {
	cmd    *exec.Cmd
	log    string // its stderr and stdout
	done   chan struct{}
	api    string // host:port of its API (GET /metrics)
	gossip string // host:port of its memberlist
}

// startWorker runs bin as a worker on the simulated fabric, bound to
// loopback and joined to seed: the product's defaults otherwise (LAN
// gossip profile, info logging), with the gossip key when key is set. It
// returns once the worker has logged that it is up.
func startWorker(ctx context.Context, bin, dir, seed string, key []byte) (*worker, error) {
	args := []string{"worker", "--name", workerName, "--fabric", "sim", "--gossip-bind", "127.0.0.1:0",
		"--api-listen", "127.0.0.1:0", "--join", seed, "--log-format", "json"}
	if key != nil {
		kf := filepath.Join(dir, "gossip.key")
		if err := os.WriteFile(kf, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
			return nil, err
		}
		args = append(args, "--gossip-key-file", kf)
	}
	w := &worker{log: filepath.Join(dir, "worker.log"), done: make(chan struct{})}
	f, err := os.Create(w.log)
	if err != nil {
		return nil, err
	}
	w.cmd = exec.Command(bin, args...)
	w.cmd.Stdout, w.cmd.Stderr = f, f
	w.cmd.SysProcAttr = childAttr()
	// Only the flags above configure it: RDMAMESH_* in the caller's
	// environment would change what is measured.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RDMAMESH_") {
			w.cmd.Env = append(w.cmd.Env, kv)
		}
	}
	if err := w.cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		_ = w.cmd.Wait()
		f.Close()
		close(w.done)
	}()
	err = poll(ctx, 30*time.Second, 50*time.Millisecond, func() (bool, error) {
		if !w.running() {
			return false, fmt.Errorf("the worker exited: %s", w.tail())
		}
		w.api, w.gossip = w.upLine()
		return w.gossip != "", nil
	})
	if err != nil {
		w.stop()
		return nil, fmt.Errorf("worker start: %w", err)
	}
	return w, nil
}

// upLine finds the worker's "worker up" log line and its addresses.
func (w *worker) upLine() (api, gossip string) {
	f, err := os.Open(w.log)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct{ Msg, API, Gossip string }
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "worker up" {
			return l.API, l.Gossip
		}
	}
	return "", ""
}

func (w *worker) pid() int { return w.cmd.Process.Pid }

func (w *worker) running() bool {
	select {
	case <-w.done:
		return false
	default:
		return true
	}
}

// stop asks the worker to leave and end, and kills it after a grace.
func (w *worker) stop() {
	if !w.running() {
		return
	}
	_ = w.cmd.Process.Signal(os.Interrupt)
	select {
	case <-w.done:
	case <-time.After(5 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.done
	}
}

func (w *worker) tail() string {
	b, _ := os.ReadFile(w.log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-5):], " | ")
}

// members is how many gossip members the worker sees, from its /metrics
// (rdmamesh_worker_gossip_members). Each call costs the worker a scrape:
// the measurement window makes none.
func (w *worker) members(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+w.api+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	return gaugeValue(resp.Body, "rdmamesh_worker_gossip_members")
}

// gaugeValue reads an unlabelled sample from Prometheus text exposition.
func gaugeValue(r io.Reader, name string) (int, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), name+" ")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		return int(f), nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New(name + " not in /metrics")
}

// poll calls cond every interval until it holds, fails, ctx ends or
// timeout passes.
func poll(ctx context.Context, timeout, every time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", timeout)
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-t.C:
		}
	}
}
