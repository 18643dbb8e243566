package sim

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func mustFabric(tb testing.TB, cfg Config) *Fabric {
	tb.Helper()
	f, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

func faults(tb testing.TB, specs ...string) []Fault {
	tb.Helper()
	fs, err := ParseFaults(specs)
	if err != nil {
		tb.Fatal(err)
	}
	return fs
}

// outcome is one directional rail test as a worker pair would run it.
type outcome struct {
	Step string // the call that failed, or "" when the test measured
	Err  *probe.Error
	Lat  probe.Latency
	BW   probe.Bandwidth
}

func endpoint(spec PresetSpec, rail int) probe.Endpoint {
	return probe.Endpoint{Device: spec.Device(rail), Port: 1, GIDIndex: -1, Rail: rail}
}

// runPair follows the worker protocol: the initiator opens, the responder
// opens and connects to the initiator's info, the initiator connects to the
// responder's and measures.
func runPair(tb testing.TB, fab *Fabric, src, dst string, rail int, p probe.TestParams) outcome {
	tb.Helper()
	o, _, _ := runPairInfo(tb, fab, src, dst, rail, p)
	return o
}

// runPairInfo is runPair that also returns both QPs' infos.
func runPairInfo(tb testing.TB, fab *Fabric, src, dst string, rail int, p probe.TestParams) (o outcome, ini, resp probe.QPInfo) {
	tb.Helper()
	ctx := context.Background()
	ep := endpoint(fab.spec, rail)
	fail := func(step string, err error) (outcome, probe.QPInfo, probe.QPInfo) {
		return outcome{Step: step, Err: classified(tb, err)}, ini, resp
	}
	is, err := fab.Node(src).Open(ctx, ep, p)
	if err != nil {
		return fail("open-src", err)
	}
	defer is.Close()
	ini = is.Info()
	rs, err := fab.Node(dst).Open(ctx, ep, p)
	if err != nil {
		return fail("open-dst", err)
	}
	defer rs.Close()
	resp = rs.Info()
	if err := rs.Connect(ctx, ini); err != nil {
		return fail("connect-dst", err)
	}
	if err := rs.Respond(ctx, p); err != nil {
		return fail("respond", err)
	}
	if err := is.Connect(ctx, resp); err != nil {
		return fail("connect-src", err)
	}
	if o.Lat, err = is.Latency(ctx, p); err != nil {
		return fail("latency", err)
	}
	if o.BW, err = is.Bandwidth(ctx, p); err != nil {
		return fail("bandwidth", err)
	}
	return o, ini, resp
}

// classified checks the contract every provider error keeps.
func classified(tb testing.TB, err error) *probe.Error {
	tb.Helper()
	var pe *probe.Error
	if !errors.As(err, &pe) {
		tb.Fatalf("%v is not a *probe.Error", err)
	}
	if pe.Class == "" || pe.Verb == "" || pe.Cause == "" || pe.Fix == "" {
		tb.Fatalf("incomplete error %+v", pe)
	}
	return pe
}

func TestFaultClasses(t *testing.T) {
	cases := []struct {
		fault    string
		rail     int
		step     string
		class    probe.Class
		verb     string
		errno    int
		wc       int
		mentions string
	}{
		{"node-01/mlx5_0:down", 0, "open-src", probe.ClassPortDown, "ibv_query_port", 0, 0, "DOWN"},
		{"node-02:down", 3, "open-dst", probe.ClassPortDown, "ibv_query_port", 0, 0, "mlx5_3 port 1 on node-02"},
		{"node-01~node-02/mlx5_1:down", 1, "open-src", probe.ClassPortDown, "ibv_query_port", 0, 0, "DOWN"},
		{"node-01~node-02/mlx5_1:down", 0, "", probe.ClassOK, "", 0, 0, ""},
		{"node-02/mlx5_0:loss=100%", 0, "latency", probe.ClassRetryExceeded, "ibv_poll_cq", 0, 12, "lost"},
		{"node-01:loss=100%", 2, "latency", probe.ClassRetryExceeded, "ibv_poll_cq", 0, 12, "100% loss at node-01 mlx5_2"},
		{"node-01:mtu=1024", 0, "bandwidth", probe.ClassMTUMismatch, "ibv_poll_cq", 0, 12, "large writes fail while small ones pass"},
		{"node-02:mtu=4096", 0, "", probe.ClassOK, "", 0, 0, ""},
		{"node-01/mlx5_0:gid=wrong", 0, "connect-dst", probe.ClassInvalidGID, "ibv_modify_qp(RTR)", 22, 0, "node-01"},
		{"node-02/mlx5_0:gid=wrong", 0, "connect-dst", probe.ClassInvalidGID, "ibv_modify_qp(RTR)", 22, 0, "node-02"},
		{"node-01:bw=0.4", 0, "", probe.ClassOK, "", 0, 0, ""},
		{"node-02:lat=5x,tail=20x", 0, "", probe.ClassOK, "", 0, 0, ""},
		{"node-02:dead", 0, "", probe.ClassOK, "", 0, 0, ""}, // reported by Dead, not by traffic
	}
	for _, preset := range PresetNames() {
		for _, c := range cases {
			spec, _ := Preset(preset)
			if c.rail >= spec.HCAs || (strings.Contains(c.fault, "mlx5_1") && spec.HCAs < 2) ||
				(c.class == probe.ClassMTUMismatch && spec.MTU <= 1024) {
				continue // an HCA the preset lacks, or an MTU it already has
			}
			// The cases name mlx5 HCAs; a preset's own names stand in.
			fault := strings.ReplaceAll(c.fault, "mlx5_", spec.devicePrefix())
			mentions := strings.ReplaceAll(c.mentions, "mlx5_", spec.devicePrefix())
			t.Run(preset+"/"+c.fault, func(t *testing.T) {
				fab := mustFabric(t, Config{Preset: preset, Seed: 1, Faults: faults(t, fault)})
				o := runPair(t, fab, "node-01", "node-02", c.rail, probe.DefaultTestParams())
				if c.class == probe.ClassOK {
					if o.Err != nil {
						t.Fatalf("failed at %s: %v", o.Step, o.Err)
					}
					return
				}
				if o.Step != c.step || o.Err.Class != c.class || o.Err.Verb != c.verb ||
					o.Err.Errno != c.errno || o.Err.WCStatus != c.wc || !strings.Contains(o.Err.Cause, mentions) {
					t.Fatalf("step %s: %+v", o.Step, o.Err)
				}
			})
		}
	}
}

func TestLossFix(t *testing.T) {
	for _, preset := range PresetNames() {
		fab := mustFabric(t, Config{Preset: preset, Faults: faults(t, "node-02:loss=100%")})
		o := runPair(t, fab, "node-01", "node-02", 0, probe.DefaultTestParams())
		if o.Err == nil || !strings.Contains(o.Err.Fix, "cable") ||
			(!strings.Contains(o.Err.Fix, "perfquery") && !strings.Contains(o.Err.Fix, "ethtool -S")) {
			t.Fatalf("%s: loss fix should point at the link counters: %+v", preset, o.Err)
		}
	}
}

// TestInitiatorConnect checks the initiator's own RTR, which runPair never
// reaches when the responder fails first.
func TestInitiatorConnect(t *testing.T) {
	ctx := context.Background()
	p := probe.DefaultTestParams()
	healthy := mustFabric(t, Config{})
	faulty := mustFabric(t, Config{Faults: faults(t, "node-02/mlx5_0:gid=wrong", "node-03/mlx5_0:down")})
	ep := endpoint(healthy.spec, 0)
	for _, c := range []struct {
		peer  string
		step  string
		class probe.Class
	}{
		{"node-02", "connect", probe.ClassInvalidGID},
		// A peer whose port went down after it published its QP info: RTR
		// succeeds, the first transfer exhausts its retries.
		{"node-03", "latency", probe.ClassRetryExceeded},
	} {
		remote, err := healthy.Node(c.peer).Open(ctx, ep, p)
		if err != nil {
			t.Fatal(err)
		}
		ini, err := faulty.Node("node-01").Open(ctx, ep, p)
		if err != nil {
			t.Fatal(err)
		}
		step := "connect"
		err = ini.Connect(ctx, remote.Info())
		if err == nil {
			step = "latency"
			_, err = ini.Latency(ctx, p)
		}
		if err == nil || step != c.step || classified(t, err).Class != c.class {
			t.Fatalf("%s: %s: %v", c.peer, step, err)
		}
		// The QP is in the error state now: the next transfer fails at once
		// with the same class.
		if c.step == "latency" {
			if _, again := ini.Bandwidth(ctx, p); classified(t, again).Class != c.class {
				t.Fatalf("second transfer: %v", again)
			}
		}
	}
}

func TestGIDSelection(t *testing.T) {
	ctx := context.Background()
	p := probe.DefaultTestParams()
	roce := mustFabric(t, Config{Preset: "roce-2x100"})
	ib := mustFabric(t, Config{})
	open := func(f *Fabric, node string, gid int) (*Session, error) {
		return f.Node(node).Open(ctx, probe.Endpoint{Device: "mlx5_0", Port: 1, GIDIndex: gid}, p)
	}
	if _, err := open(ib, "node-01", 200); classified(t, err).Class != probe.ClassInvalidGID || classified(t, err).Verb != "ibv_query_gid" {
		t.Fatalf("index past the table: %v", err)
	}
	// An empty slot opens (ibv_query_gid reads zeros) and fails at RTR.
	a, _ := open(roce, "node-01", 7)
	b, _ := open(roce, "node-02", 3)
	if err := a.Connect(ctx, b.Info()); classified(t, err).Class != probe.ClassInvalidGID {
		t.Fatalf("empty GID slot: %v", err)
	}
	// RoCE v1 against v2 connects and then loses every packet.
	a, _ = open(roce, "node-01", 2)
	if err := a.Connect(ctx, b.Info()); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Latency(ctx, p); classified(t, err).Class != probe.ClassRetryExceeded || !strings.Contains(err.Error(), "RoCE versions") {
		t.Fatalf("v1/v2 mismatch: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	n := mustFabric(t, Config{}).Node("node-01")
	bad := probe.DefaultTestParams()
	bad.LatencyIters = 0
	cases := []struct {
		ep    probe.Endpoint
		p     probe.TestParams
		class probe.Class
		verb  string
	}{
		{probe.Endpoint{Device: "mlx5_8", Port: 1, GIDIndex: -1}, probe.DefaultTestParams(), probe.ClassPortDown, "ibv_open_device"},
		{probe.Endpoint{Device: "mlx4_0", Port: 1, GIDIndex: -1}, probe.DefaultTestParams(), probe.ClassPortDown, "ibv_open_device"},
		{probe.Endpoint{Device: "mlx5_0", Port: 2, GIDIndex: -1}, probe.DefaultTestParams(), probe.ClassPortDown, "ibv_query_port"},
		{probe.Endpoint{Device: "mlx5_0", Port: 1, GIDIndex: -2}, probe.DefaultTestParams(), probe.ClassInvalidGID, "ibv_query_gid"},
		{probe.Endpoint{Device: "mlx5_0", Port: 1, GIDIndex: -1}, bad, probe.ClassInternal, "ibv_reg_mr"},
	}
	for _, c := range cases {
		_, err := n.Open(ctx, c.ep, c.p)
		if e := classified(t, err); e.Class != c.class || e.Verb != c.verb {
			t.Errorf("%+v: %+v", c.ep, e)
		}
	}
}

func TestSessionMisuse(t *testing.T) {
	ctx := context.Background()
	p := probe.DefaultTestParams()
	fab := mustFabric(t, Config{})
	a, _ := fab.Node("node-01").Open(ctx, endpoint(fab.spec, 0), p)
	b, _ := fab.Node("node-02").Open(ctx, endpoint(fab.spec, 0), p)
	if _, err := a.Latency(ctx, p); classified(t, err).Class != probe.ClassInternal {
		t.Fatalf("latency before connect: %v", err)
	}
	if err := a.Connect(ctx, probe.QPInfo{}); classified(t, err).Class != probe.ClassInternal {
		t.Fatalf("empty remote: %v", err)
	}
	if err := a.Connect(ctx, b.Info()); err != nil {
		t.Fatal(err)
	}
	if err := a.Connect(ctx, b.Info()); classified(t, err).Class != probe.ClassInternal {
		t.Fatalf("second connect: %v", err)
	}
	if bw, err := a.Bandwidth(ctx, probe.TestParams{LatencySize: 8, LatencyIters: 1, Timeout: time.Second}); err != nil || bw != (probe.Bandwidth{}) {
		t.Fatalf("bw_size 0 should skip: %+v %v", bw, err)
	}
	for i := 0; i < 2; i++ {
		if err := a.Close(); err != nil {
			t.Fatalf("close %d: %v", i, err)
		}
	}
	if _, err := a.Latency(ctx, p); classified(t, err).Class != probe.ClassInternal {
		t.Fatalf("latency after close: %v", err)
	}
	if err := a.Respond(ctx, p); classified(t, err).Class != probe.ClassInternal {
		t.Fatalf("respond after close: %v", err)
	}
}

// sequence runs a fixed mix of tests, retests and faults.
func sequence(t *testing.T, seed int64) []outcome {
	t.Helper()
	fab := mustFabric(t, Config{Seed: seed, Faults: faults(t, "node-03:loss=30%", "node-02/mlx5_1:tail=10x")})
	p := probe.DefaultTestParams()
	var out []outcome
	for round := 0; round < 3; round++ {
		for _, pair := range [][2]string{{"node-01", "node-02"}, {"node-02", "node-03"}, {"node-03", "node-01"}} {
			for rail := 0; rail < 3; rail++ {
				out = append(out, runPair(t, fab, pair[0], pair[1], rail, p))
			}
		}
	}
	return out
}

func TestDeterminism(t *testing.T) {
	a, b := sequence(t, 42), sequence(t, 42)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, same sequence, different results")
	}
	c := sequence(t, 43)
	if reflect.DeepEqual(a[0].Lat, c[0].Lat) {
		t.Fatal("different seeds gave identical samples")
	}
	// A retest of the same pair and rail draws fresh samples.
	if reflect.DeepEqual(a[0].Lat, a[9].Lat) {
		t.Fatal("retest repeated the first test's samples")
	}
}

func TestHealthyBands(t *testing.T) {
	p := probe.DefaultTestParams()
	for _, preset := range PresetNames() {
		fab := mustFabric(t, Config{Preset: preset, Seed: 7})
		spec := fab.spec
		for rail := 0; rail < spec.HCAs; rail++ {
			o := runPair(t, fab, "node-01", "node-02", rail, p)
			if o.Err != nil {
				t.Fatalf("%s rail %d: %v", preset, rail, o.Err)
			}
			// A noisy preset's test lands within 8 of its spreads (the
			// tail's 4 twice over) of the typical figures.
			lo, hi, bwTol := 0.97, 1.05, 0.02
			if sp := spec.TestSpread; sp > 0 {
				lo, hi, bwTol = math.Exp(-8*sp), math.Exp(8*sp), math.Exp(8*sp)-1
			}
			l := o.Lat
			if l.Samples != p.LatencyIters || l.P50Ns < lo*spec.BaseLatencyNs || l.P50Ns > hi*spec.BaseLatencyNs {
				t.Errorf("%s rail %d: p50 %.0f ns outside the band around %.0f", preset, rail, l.P50Ns, spec.BaseLatencyNs)
			}
			if !(l.MinNs <= l.P50Ns && l.P50Ns <= l.P90Ns && l.P90Ns <= l.P99Ns && l.P99Ns <= l.P999Ns && l.P999Ns <= l.MaxNs) {
				t.Errorf("%s: quantiles out of order: %+v", preset, l)
			}
			if l.P99Ns > (1+12*spec.JitterFrac)*l.P50Ns {
				t.Errorf("%s: healthy p99 %.0f is more than %.2f x p50 %.0f", preset, l.P99Ns, 1+12*spec.JitterFrac, l.P50Ns)
			}
			want := spec.ExpectedGbps(p.BWSize)
			if math.Abs(o.BW.Gbps-want) > bwTol*want || o.BW.Bytes != int64(p.BWSize*p.BWIters) || o.BW.MsgRate <= 0 || o.BW.Duration <= 0 {
				t.Errorf("%s rail %d: bandwidth %+v, want ~%.1f Gb/s", preset, rail, o.BW, want)
			}
		}
	}
}

func TestDegradations(t *testing.T) {
	p := probe.DefaultTestParams()
	base := runPair(t, mustFabric(t, Config{Seed: 3}), "node-01", "node-02", 0, p)
	cases := []struct {
		fault   string
		metric  func(outcome) float64
		lo, hi  float64 // ratio to healthy
		p50Same bool
	}{
		{"node-02:bw=0.4", func(o outcome) float64 { return o.BW.Gbps }, 0.38, 0.42, true},
		{"node-01/mlx5_0:lat=5x", func(o outcome) float64 { return o.Lat.P50Ns }, 4.8, 5.2, false},
		{"node-02:tail=20x", func(o outcome) float64 { return o.Lat.P99Ns }, 17, 23, true},
		{"node-02:tail=20x", func(o outcome) float64 { return o.Lat.MaxNs }, 17, 23, true},
	}
	for _, c := range cases {
		o := runPair(t, mustFabric(t, Config{Seed: 3, Faults: faults(t, c.fault)}), "node-01", "node-02", 0, p)
		if o.Err != nil {
			t.Fatalf("%s: %v", c.fault, o.Err)
		}
		if r := c.metric(o) / c.metric(base); r < c.lo || r > c.hi {
			t.Errorf("%s: ratio %.2f, want %.2f..%.2f", c.fault, r, c.lo, c.hi)
		}
		if r := o.Lat.P50Ns / base.Lat.P50Ns; c.p50Same && math.Abs(r-1) > 0.02 {
			t.Errorf("%s: p50 moved by %.2f", c.fault, r)
		}
	}
}

func TestLossRate(t *testing.T) {
	fab := mustFabric(t, Config{Seed: 9, Faults: faults(t, "node-02/mlx5_0:loss=30%")})
	p := probe.DefaultTestParams()
	p.LatencyIters, p.BWIters = 100, 10
	const n = 400
	failed := 0
	var passTail, cleanTail float64
	for i := 0; i < n; i++ {
		o := runPair(t, fab, "node-01", "node-02", 0, p)
		if o.Err != nil {
			if o.Err.Class != probe.ClassRetryExceeded {
				t.Fatalf("lossy test failed as %s", o.Err.Class)
			}
			failed++
			continue
		}
		passTail = math.Max(passTail, o.Lat.MaxNs/o.Lat.P50Ns)
	}
	for i := 0; i < 20; i++ {
		o := runPair(t, fab, "node-01", "node-02", 1, p)
		cleanTail = math.Max(cleanTail, o.Lat.MaxNs/o.Lat.P50Ns)
	}
	if r := float64(failed) / n; r < 0.24 || r > 0.36 {
		t.Errorf("%.0f%% of tests failed, want ~30%%", r*100)
	}
	if passTail < 2*cleanTail {
		t.Errorf("surviving lossy tests should show a grown tail: max/p50 %.1f vs clean %.1f", passTail, cleanTail)
	}
}

func TestTimeScale(t *testing.T) {
	p := probe.DefaultTestParams()
	p.Timeout = 10 * time.Second
	slow := faults(t, "node-02:lat=1000x") // ~2 s of modelled ping-pong

	connected := func(t *testing.T, fab *Fabric) *Session {
		t.Helper()
		ctx := context.Background()
		a, _ := fab.Node("node-01").Open(ctx, endpoint(fab.spec, 0), p)
		b, _ := fab.Node("node-02").Open(ctx, endpoint(fab.spec, 0), p)
		if err := a.Connect(ctx, b.Info()); err != nil {
			t.Fatal(err)
		}
		return a
	}
	t.Run("deadline cuts a long test short", func(t *testing.T) {
		s := connected(t, mustFabric(t, Config{TimeScale: 1, Faults: slow}))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := s.Latency(ctx, p)
		if classified(t, err).Class != probe.ClassTimeout || time.Since(start) > time.Second {
			t.Fatalf("after %s: %v", time.Since(start), err)
		}
	})
	t.Run("deadline cuts a retry wait short", func(t *testing.T) {
		s := connected(t, mustFabric(t, Config{TimeScale: 1, Faults: faults(t, "node-02:loss=100%")}))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := s.Bandwidth(ctx, probe.DefaultTestParams())
		if classified(t, err).Class != probe.ClassTimeout || time.Since(start) > 400*time.Millisecond {
			t.Fatalf("after %s: %v", time.Since(start), err)
		}
	})
	t.Run("cancelled before the call", func(t *testing.T) {
		s := connected(t, mustFabric(t, Config{TimeScale: 1}))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := s.Latency(ctx, p); classified(t, err).Class != probe.ClassTimeout {
			t.Fatal(err)
		}
	})
	t.Run("real time takes the modelled time", func(t *testing.T) {
		s := connected(t, mustFabric(t, Config{TimeScale: 1}))
		q := probe.DefaultTestParams()
		start := time.Now()
		if _, err := s.Latency(context.Background(), q); err != nil {
			t.Fatal(err)
		}
		floor := time.Duration(float64(q.LatencyIters+q.Warmup) * 2 * 0.95 * s.node.fab.spec.BaseLatencyNs)
		if el := time.Since(start); el < floor {
			t.Fatalf("took %s, modelled at least %s", el, floor)
		}
	})
	t.Run("modelled time beyond the timeout is a timeout", func(t *testing.T) {
		q := p
		q.Timeout = 100 * time.Millisecond
		s := connected(t, mustFabric(t, Config{Faults: slow}))
		if _, err := s.Latency(context.Background(), q); classified(t, err).Class != probe.ClassTimeout {
			t.Fatal(err)
		}
		s = connected(t, mustFabric(t, Config{Faults: faults(t, "node-02:loss=100%")}))
		_, err := s.Latency(context.Background(), q)
		if e := classified(t, err); e.Class != probe.ClassTimeout || !strings.Contains(e.Fix, "cable") {
			t.Fatalf("retries outlasting the timeout: %+v", e)
		}
	})
}

// TestParallelRails runs every rail of a pair at once, as a worker does, and
// expects what a rail-by-rail run gives: each rail has its own counter.
func TestParallelRails(t *testing.T) {
	cfg := Config{Seed: 5, Faults: faults(t, "node-02:loss=30%")}
	p := probe.DefaultTestParams()
	seq := mustFabric(t, cfg)
	want := make([]outcome, seq.spec.HCAs)
	for rail := range want {
		want[rail] = runPair(t, seq, "node-01", "node-02", rail, p)
	}
	par := mustFabric(t, cfg)
	got := make([]outcome, par.spec.HCAs)
	done := make(chan struct{})
	for rail := range got {
		go func() {
			defer func() { done <- struct{}{} }()
			got[rail] = runPair(t, par, "node-01", "node-02", rail, p)
		}()
	}
	for range got {
		<-done
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatal("parallel rails disagree with sequential ones")
	}
}

// TestOneWayFaults: a one-way fault degrades the tests whose writes cross
// it in full and the reverse tests only through their acknowledgements.
func TestOneWayFaults(t *testing.T) {
	p := probe.DefaultTestParams()
	p.LatencyIters, p.BWIters = 100, 10
	base := runPair(t, mustFabric(t, Config{Seed: 3}), "node-01", "node-02", 0, p)
	cases := []struct {
		fault                string
		outLo, outHi         float64 // node-02 -> node-01 Gb/s over healthy
		inLo, inHi           float64 // node-01 -> node-02
		outFailLo, outFailHi float64 // share of node-02's tests as initiator failing
	}{
		{"node-02:bw=0.3@egress", 0.28, 0.32, 0.98, 1.02, 0, 0},
		{"node-02:bw=0.3@ingress", 0.98, 1.02, 0.28, 0.32, 0, 0},
		// Loss: writes lose 20%, acknowledgements a quarter of that.
		{"node-02/mlx5_0:loss=20%@egress", 1 / 2.6 * 0.98, 1 / 2.6 * 1.02, 1 / 1.4 * 0.98, 1 / 1.4 * 1.02, 0.12, 0.28},
	}
	for _, c := range cases {
		fab := mustFabric(t, Config{Seed: 4, Faults: faults(t, c.fault)})
		failed, n := 0, 200
		var out outcome
		for i := 0; i < n; i++ {
			o := runPair(t, fab, "node-02", "node-01", 0, p)
			if o.Err != nil {
				failed++
				continue
			}
			out = o
		}
		in := runPair(t, mustFabric(t, Config{Seed: 5, Faults: faults(t, c.fault)}), "node-01", "node-02", 0, p)
		for attempt := 0; in.Err != nil && attempt < 20; attempt++ {
			in = runPair(t, mustFabric(t, Config{Seed: int64(6 + attempt), Faults: faults(t, c.fault)}), "node-01", "node-02", 0, p)
		}
		if in.Err != nil || out.BW.Gbps == 0 {
			t.Fatalf("%s: no test passed (%v)", c.fault, in.Err)
		}
		if r := out.BW.Gbps / base.BW.Gbps; r < c.outLo || r > c.outHi {
			t.Errorf("%s: as initiator %.3f of healthy, want %.3f..%.3f", c.fault, r, c.outLo, c.outHi)
		}
		if r := in.BW.Gbps / base.BW.Gbps; r < c.inLo || r > c.inHi {
			t.Errorf("%s: as target %.3f of healthy, want %.3f..%.3f", c.fault, r, c.inLo, c.inHi)
		}
		if r := float64(failed) / float64(n); r < c.outFailLo || r > c.outFailHi {
			t.Errorf("%s: %.2f of its tests as initiator failed, want %.2f..%.2f", c.fault, r, c.outFailLo, c.outFailHi)
		}
	}
}
