package cluster

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/gate"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
	"github.com/rdmamesh/rdmamesh/matrix"
)

func start(t *testing.T, nodes int, faults ...string) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := probe.DefaultTestParams()
	p.LatencyIters = 200
	cl, err := Start(ctx, Options{Nodes: nodes, Rails: 2, Preset: "roce-2x100", Seed: 7, Faults: faults,
		Listen: "127.0.0.1:0", Mode: "full", Params: p, PairTimeout: 5 * time.Second,
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

// sweep starts a sweep and waits for it to end (polling state, no sleeps).
func sweep(t *testing.T, cl *Cluster) (api.SweepInfo, *matrix.Matrix) {
	t.Helper()
	return sweepWith(t, cl, api.SweepRequest{})
}

func sweepWith(t *testing.T, cl *Cluster, req api.SweepRequest) (api.SweepInfo, *matrix.Matrix) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	info, err := cl.Coord.StartSweep(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for info.State == api.SweepRunning {
		select {
		case <-ctx.Done():
			t.Fatalf("sweep %s still running: round %d/%d", info.ID, info.RoundsDone, info.Rounds)
		case <-tick.C:
		}
		info, _ = cl.Coord.Sweep(info.ID)
	}
	m, ok := cl.Coord.Matrix(info.ID)
	if !ok {
		t.Fatal("no matrix")
	}
	if !m.Compact() {
		t.Fatal("the coordinator holds a materialised matrix; it keeps the compact analysis")
	}
	return info, m.Materialize() // the tests read every cell
}

func TestSweepAllOK(t *testing.T) {
	cl := start(t, 8)
	info, m := sweep(t, cl)
	if info.State != api.SweepDone || info.Rounds != 7 || info.RoundsDone != 7 {
		t.Fatalf("sweep %+v", info)
	}
	if want := 8 * 7 * 2; len(m.Cells) != want || info.CellsDone != want {
		t.Fatalf("%d cells (%d done), want %d", len(m.Cells), info.CellsDone, want)
	}
	for _, c := range m.Cells {
		if c.Verdict != matrix.VerdictOK || c.Latency == nil || c.Latency.P50Ns <= 0 || c.Bandwidth == nil || c.Bandwidth.Gbps <= 0 {
			t.Fatalf("cell %s->%s rail %d: %s %s", c.Src, c.Dst, c.Rail, c.Verdict, c.Reason)
		}
		if c.SrcDevice != "mlx5_"+string(rune('0'+c.Rail)) {
			t.Fatalf("rail %d tested on %s", c.Rail, c.SrcDevice)
		}
	}
	if !m.Healthy || info.Healthy == nil || !*info.Healthy {
		t.Fatalf("unhealthy: %s", m.Summary())
	}
	// A second sweep on the same cluster works too and is kept in history.
	if _, m2 := sweep(t, cl); !m2.Healthy || len(cl.Coord.Sweeps()) != 2 {
		t.Fatal("second sweep")
	}
}

func TestSweepNamesDownHCA(t *testing.T) {
	cl := start(t, 8, "node-03/mlx5_1:down")
	_, m := sweep(t, cl)
	if m.Healthy || len(m.Suspects) == 0 {
		t.Fatalf("fault not seen:\n%s", m.Summary())
	}
	s := m.Suspects[0]
	if s.Kind != "hca" || s.Node != "node-03" || s.Device != "mlx5_1" || s.Rail != 1 {
		t.Fatalf("first suspect %+v\n%s", s, m.Summary())
	}
	for _, c := range m.Cells {
		involved := c.Rail == 1 && (c.Src == "node-03" || c.Dst == "node-03")
		if involved == (c.Verdict == matrix.VerdictOK) {
			t.Fatalf("cell %s->%s rail %d: %s (%s)", c.Src, c.Dst, c.Rail, c.Verdict, c.Reason)
		}
	}
}

func TestSweepNamesDeadWorker(t *testing.T) {
	cl := start(t, 8, "node-04:dead")
	info, m := sweep(t, cl)
	if info.State != api.SweepDone {
		t.Fatalf("sweep %+v", info)
	}
	if len(m.Suspects) == 0 || m.Suspects[0].Node != "node-04" || m.Suspects[0].Kind != "node" {
		t.Fatalf("suspects: %s", m.Summary())
	}
	for _, c := range m.Cells {
		involved := c.Src == "node-04" || c.Dst == "node-04"
		if involved && c.Class != probe.ClassPeerLost {
			t.Fatalf("cell %s->%s: %s, want peer-lost", c.Src, c.Dst, c.Class)
		}
		if !involved && c.Verdict != matrix.VerdictOK {
			t.Fatalf("cell %s->%s: %s", c.Src, c.Dst, c.Verdict)
		}
	}
}

func TestGateExitCodes(t *testing.T) {
	healthy := start(t, 4)
	faulty := start(t, 4, "node-02:bw=0.4")
	down := start(t, 4, "node-03/mlx5_0:down")
	cases := []struct {
		name string
		o    gate.Options
		want int
	}{
		{"healthy", gate.Options{Coordinator: healthy.URL}, gate.ExitHealthy},
		{"latest after a healthy run", gate.Options{Coordinator: healthy.URL, Latest: true}, gate.ExitHealthy},
		{"degraded bandwidth", gate.Options{Coordinator: faulty.URL}, gate.ExitPerformance},
		{"a port down", gate.Options{Coordinator: down.URL}, gate.ExitUnhealthy},
		{"no URL", gate.Options{}, gate.ExitUsage},
		{"not a URL", gate.Options{Coordinator: "coordinator:8080"}, gate.ExitUsage},
		{"unreachable", gate.Options{Coordinator: "http://127.0.0.1:1"}, gate.ExitInfra},
		{"bad request", gate.Options{Coordinator: healthy.URL, Request: api.SweepRequest{Nodes: []string{"nope"}}}, gate.ExitUsage},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			tc.o.Poll = 10 * time.Millisecond
			tc.o.Timeout = time.Minute
			if got := gate.Run(context.Background(), tc.o, &out, &errOut); got != tc.want {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", got, tc.want, out.String(), errOut.String())
			}
		})
	}
}

// A worker the control network cannot reach (gossip alive, API refused)
// is untested, not broken: the gate exits 3, excludes nobody, and names
// the worker with the control network as the fix.
func TestUnreachableWorkerAPI(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := Start(ctx, Options{Nodes: 4, Rails: 2, Preset: "roce-2x100", Seed: 7, Listen: "127.0.0.1:0", Mode: "full",
		Params: probe.DefaultTestParams(), PairTimeout: 5 * time.Second, Unreachable: []string{"node-03"},
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	// Every worker must see node-03 alive, as the coordinator does: a worker
	// whose gossip has not met it yet cannot tell a refused API from a lost
	// peer, and calls it lost.
	wait.Within(t, 30*time.Second, "every worker's gossip to hold all 4 workers and the coordinator", func() bool {
		for _, n := range cl.Names() {
			if cl.Worker(n).Members() < 5 {
				return false
			}
		}
		return true
	})
	var out, errOut bytes.Buffer
	code := gate.Run(context.Background(), gate.Options{Coordinator: cl.URL, Poll: 10 * time.Millisecond, Timeout: time.Minute}, &out, &errOut)
	if code != gate.ExitInfra || strings.Contains(out.String(), "exclude") ||
		!strings.Contains(out.String(), "node node-03: untested in 12/12 cells") || !strings.Contains(out.String(), "could not be reached over the control network") {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, gate.ExitInfra, out.String(), errOut.String())
	}
}
