package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
	"github.com/rdmamesh/rdmamesh/internal/pairtest"
)

// simProbe puts one simulated fabric behind `rdmamesh probe` for a test:
// the n-th command that opens it is node host-<n> (a, b, ...). Tests that
// use it do not run in parallel.
func simProbe(t *testing.T, faults ...string) {
	t.Helper()
	fs, err := sim.ParseFaults(faults)
	if err != nil {
		t.Fatal(err)
	}
	fab, err := sim.New(sim.Config{Preset: "roce-2x100", Seed: 1, Faults: fs})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	n := 0
	old := probeFabric
	probeFabric = func(string, string) (fabric.Fabric, func() error, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fabric.Adapt(fab.Node("host-" + string(rune('a'+n-1)))), func() error { return nil }, nil
	}
	t.Cleanup(func() { probeFabric = old })
}

// syncBuf is a goroutine-safe buffer that announces the address a listener
// prints it waits on.
type syncBuf struct {
	mu   sync.Mutex
	b    bytes.Buffer
	addr chan string
}

var waitingRE = regexp.MustCompile(`waiting for a peer on (\S+)\n`)

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	before := waitingRE.MatchString(s.b.String())
	s.b.Write(p)
	if m := waitingRE.FindStringSubmatch(s.b.String()); m != nil && !before && s.addr != nil {
		s.addr <- m[1]
	}
	return len(p), nil
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// listener is a running `rdmamesh probe --listen`.
type listener struct {
	addr     string
	out, err *syncBuf
	code     chan int
	stop     context.CancelFunc
}

func startListener(t *testing.T, args ...string) *listener {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &listener{out: &syncBuf{}, err: &syncBuf{addr: make(chan string, 1)}, code: make(chan int, 1), stop: cancel}
	go func() {
		l.code <- runContext(ctx, append([]string{"probe", "--listen", "127.0.0.1:0", "--device", "mlx5_0"}, args...), l.out, l.err)
	}()
	t.Cleanup(cancel)
	select {
	case l.addr = <-l.err.addr:
	case c := <-l.code:
		t.Fatalf("listener exited %d before listening: %s", c, l.err)
	case <-time.After(30 * time.Second):
		t.Fatal("listener did not start")
	}
	return l
}

// exit waits for the listener's exit code.
func (l *listener) exit(t *testing.T) int {
	t.Helper()
	select {
	case c := <-l.code:
		return c
	case <-time.After(30 * time.Second):
		t.Fatalf("listener did not exit; stdout:\n%s\nstderr:\n%s", l.out, l.err)
		return 0
	}
}

// probeRun runs one `rdmamesh probe` to its end.
func probeRun(args ...string) (code int, stdout, stderr string) {
	var out, errOut syncBuf
	code = runContext(context.Background(), append([]string{"probe"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

func wantAll(t *testing.T, what, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

func TestProbeUsage(t *testing.T) {
	simProbe(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "give exactly one of --listen [ADDR], --peer HOST[:PORT] or --list"},
		{[]string{"--list", "--peer", "h"}, "give exactly one of"},
		{[]string{"--peer", "h", "extra"}, `unexpected argument "extra"`},
		{[]string{"--peer", "h", "--iters", "0"}, "latency_iters 0 out of range: use 1..1000000 (see --help)"},
		{[]string{"--peer", "h", "--connect", "udp"}, `connect "udp": want exchange or rdmacm (see --help)`},
		{[]string{"--listen", "--connect", "rdmacm"}, "--connect is chosen by the initiator (--peer); the listener follows it"},
		{[]string{"--peer", "h", "--bogus"}, "unknown flag: --bogus"},
	} {
		code, _, stderr := probeRun(c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("probe %v: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

func TestProbeList(t *testing.T) {
	simProbe(t)
	code, out, _ := probeRun("--list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	wantAll(t, "--list", out, "RAIL", "DEVICE", "GID", "USABLE", "mlx5_0", "mlx5_1", "ACTIVE")
	code, out, _ = probeRun("--list", "--json")
	var ports []struct {
		Device string `json:"device"`
		Usable bool   `json:"usable"`
	}
	if err := json.Unmarshal([]byte(out), &ports); code != 0 || err != nil || len(ports) != 2 || ports[1].Device != "mlx5_1" || !ports[0].Usable {
		t.Fatalf("--list --json: exit %d, %v: %s", code, err, out)
	}
}

// One test over the session exchange: both sides print perftest's tables
// and exit 0, and the listener follows the initiator's parameters.
func TestProbePair(t *testing.T) {
	simProbe(t)
	l := startListener(t)
	code, out, stderr := probeRun("--peer", l.addr, "--device", "mlx5_0", "--iters", "500", "--bw-iters", "50")
	if code != 0 {
		t.Fatalf("initiator exit %d:\n%s\n%s", code, out, stderr)
	}
	if c := l.exit(t); c != 0 {
		t.Fatalf("listener exit %d:\n%s", c, l.out)
	}
	tables := []string{"Connection     : QP info exchange", "local address", "remote address", "t_typical[usec]",
		"99.9% percentile[usec]", "BW average[Gb/sec]"}
	wantAll(t, "initiator", out, append(tables, "(rdmamesh probe, initiator)", "on host-a")...)
	wantAll(t, "listener", l.out.String(), append(tables, "(rdmamesh probe, responder)", "on host-b")...)
	// The figure rows: size and iterations as the initiator ran them.
	rows := regexp.MustCompile(`(?m)^ 8 +500 +\d+\.\d\d .*\n(?s:.*)^ 65536 +50 +\d+\.\d\d +`)
	for what, text := range map[string]string{"initiator": out, "listener": l.out.String()} {
		if !rows.MatchString(text) {
			t.Errorf("%s: no latency and bandwidth rows for 8 B x 500 and 64 KiB x 50:\n%s", what, text)
		}
	}
}

// The lab greps the listener's report for the connection mode.
func TestProbeRDMACM(t *testing.T) {
	simProbe(t)
	l := startListener(t)
	code, out, _ := probeRun("--peer", l.addr, "--device", "mlx5_0", "--connect", "rdmacm", "--json")
	var rep pairtest.Report
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("initiator exit %d (%v):\n%s", code, err, out)
	}
	if rep.Role != "initiator" || rep.Latency == nil || rep.Latency.P50Ns <= 0 || rep.Bandwidth == nil || rep.Bandwidth.Gbps <= 0 ||
		rep.Remote == nil || rep.Remote.CMAddr == "" || rep.Params.Connect != "rdmacm" {
		t.Fatalf("report %+v", rep)
	}
	if c := l.exit(t); c != 0 {
		t.Fatalf("listener exit %d:\n%s", c, l.out)
	}
	wantAll(t, "listener", l.out.String(), "Connection     : RDMA CM (")
}

// A port down on the listener's side: the initiator names the peer's
// failure, the listener its own, and both exit 1.
func TestProbePeerPortDown(t *testing.T) {
	simProbe(t, "host-a/mlx5_0:down")
	l := startListener(t)
	code, out, _ := probeRun("--peer", l.addr, "--device", "mlx5_0")
	if code != 1 {
		t.Fatalf("initiator exit %d, want 1:\n%s", code, out)
	}
	wantAll(t, "initiator", out, "peer error: port-down", "fix: ")
	if c := l.exit(t); c != 1 {
		t.Fatalf("listener exit %d, want 1:\n%s", c, l.out)
	}
	wantAll(t, "listener", l.out.String(), " error: port-down")
}

// A lossy path fails the measurement on the initiator; the close carries
// the failure, so the listener reports it too.
func TestProbeMeasurementFails(t *testing.T) {
	simProbe(t, "host-b:loss=100%")
	l := startListener(t)
	code, out, _ := probeRun("--peer", l.addr, "--device", "mlx5_0", "--json")
	var rep pairtest.Report
	if err := json.Unmarshal([]byte(out), &rep); code != 1 || err != nil || rep.Error == nil || rep.Error.Class != "retry-exceeded" {
		t.Fatalf("initiator exit %d (%v): %s", code, err, out)
	}
	if c := l.exit(t); c != 1 {
		t.Fatalf("listener exit %d, want 1:\n%s", c, l.out)
	}
	wantAll(t, "listener", l.out.String(), "peer error: retry-exceeded")
}

func TestProbeNoListener(t *testing.T) {
	simProbe(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	code, out, _ := probeRun("--peer", addr, "--device", "mlx5_0", "--connect-timeout", "300ms")
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	wantAll(t, "initiator", out, "error: peer-lost: cannot reach listener at "+addr, "fix: start `rdmamesh probe --listen` on the peer")
}

// A device the host does not have fails the test on that side (exit 1);
// an address in use cannot be listened on (exit 2).
func TestProbeLocalFailures(t *testing.T) {
	simProbe(t)
	code, out, _ := probeRun("--peer", "127.0.0.1:1", "--device", "mlx5_7")
	if code != 1 {
		t.Fatalf("missing device: exit %d, want 1:\n%s", code, out)
	}
	wantAll(t, "initiator", out, `error: port-down at ibv_open_device (errno 19): no RDMA device "mlx5_7"`)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	code, _, stderr := probeRun("--listen", busy.Addr().String())
	if code != 2 || !strings.Contains(stderr, "rdmamesh: listen: ") {
		t.Fatalf("busy port: exit %d, stderr %q", code, stderr)
	}
}

// With --keep the listener serves one test after another until stopped.
func TestProbeKeep(t *testing.T) {
	simProbe(t)
	l := startListener(t, "--keep")
	for i := range 2 {
		if code, out, _ := probeRun("--peer", l.addr, "--device", "mlx5_0", "--bw-size", "0"); code != 0 {
			t.Fatalf("test %d: exit %d:\n%s", i, code, out)
		}
	}
	l.stop()
	if c := l.exit(t); c != 0 {
		t.Fatalf("listener exit %d", c)
	}
	if n := strings.Count(l.out.String(), "(rdmamesh probe, responder)"); n != 2 {
		t.Fatalf("%d responder reports, want 2:\n%s", n, l.out)
	}
}
