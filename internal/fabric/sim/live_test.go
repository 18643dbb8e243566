package sim

import (
	"context"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
)

// Probers are what the worker's live loop asks for; the sim must be one.
var _ fabric.Prober = (*Node)(nil)

func openProbe(t *testing.T, f *Fabric, node, dev string) fabric.ProbePort {
	t.Helper()
	p, err := f.Node(node).OpenProbe(context.Background(), dev, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// probeRun sends n probes a → b and reports the answered share and the
// median RTT of the answers.
func probeRun(t *testing.T, a fabric.ProbePort, to fabric.ProbeAddr, n int) (float64, time.Duration) {
	t.Helper()
	for i := 0; i < n; i++ {
		if err := a.Send(to, uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	// The simulated answers are queued by Send itself: drain them with an
	// ended context, and whatever is not queued was lost.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var got []fabric.Answer
	buf := make([]fabric.Answer, 256)
	for len(got) < n {
		k, err := a.Poll(ctx, buf)
		if err != nil {
			break // nothing more will come: the rest were lost
		}
		got = append(got, buf[:k]...)
	}
	if len(got) == 0 {
		return 0, 0
	}
	rtts := make([]time.Duration, len(got))
	for i, g := range got {
		rtts[i] = g.RTT
		if g.From != to {
			t.Fatalf("answer from %+v, probed %+v", g.From, to)
		}
	}
	for i := 1; i < len(rtts); i++ { // insertion sort: a few hundred values
		for j := i; j > 0 && rtts[j] < rtts[j-1]; j-- {
			rtts[j], rtts[j-1] = rtts[j-1], rtts[j]
		}
	}
	return float64(len(got)) / float64(n), rtts[len(rtts)/2]
}

func TestProbesSeeFaults(t *testing.T) {
	f, err := New(Config{Preset: "ib-8x400", Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	a := openProbe(t, f, "node-01", "mlx5_0")
	b := openProbe(t, f, "node-02", "mlx5_0")
	c := openProbe(t, f, "node-03", "mlx5_0")

	okShare, base := probeRun(t, a, b.Addr(), 400)
	if okShare != 1 || base <= 0 {
		t.Fatalf("healthy: answered %.2f, rtt %v", okShare, base)
	}

	set := func(specs ...string) {
		t.Helper()
		fs, err := ParseFaults(specs)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.SetFaults(fs); err != nil {
			t.Fatal(err)
		}
	}
	set("node-02/mlx5_0:loss=5%")
	share, _ := probeRun(t, a, b.Addr(), 2000)
	if share < 0.85 || share > 0.95 { // 0.95^2 each way: ~0.90
		t.Errorf("loss=5%% at the target: answered %.3f, want ~0.90", share)
	}
	if share, _ := probeRun(t, a, c.Addr(), 400); share != 1 {
		t.Errorf("a healthy peer beside the lossy one answered %.3f", share)
	}

	set("node-03/mlx5_0:lat=5x")
	_, slow := probeRun(t, a, c.Addr(), 400)
	if r := float64(slow) / float64(base); r < 4.5 || r > 5.5 {
		t.Errorf("lat=5x: rtt %v against %v (x%.2f)", slow, base, r)
	}

	set("node-02/mlx5_0:down")
	if share, _ := probeRun(t, a, b.Addr(), 100); share != 0 {
		t.Errorf("a down port answered %.2f of the probes", share)
	}
	if _, err := f.Node("node-02").OpenProbe(context.Background(), "mlx5_0", 1); err == nil {
		t.Error("OpenProbe on a down port succeeded")
	}
	set()
	if share, _ := probeRun(t, a, b.Addr(), 100); share != 1 {
		t.Errorf("healed: answered %.2f", share)
	}
	if err := f.SetFaults([]Fault{{Spec: "x", Device: "mlx5_99"}}); err == nil {
		t.Error("SetFaults took an HCA the preset lacks")
	}
}

func TestProbePortLifecycle(t *testing.T) {
	f, err := New(Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	a := openProbe(t, f, "node-01", "mlx5_0")
	if _, err := f.Node("node-01").OpenProbe(context.Background(), "mlx5_0", 1); err == nil {
		t.Error("a second probe port on one HCA was allowed")
	}
	b, err := f.Node("node-02").OpenProbe(context.Background(), "mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	to := b.Addr()
	_ = b.Close()
	_ = b.Close()
	if share, _ := probeRun(t, a, to, 50); share != 0 {
		t.Errorf("a closed port answered %.2f", share)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Poll(ctx, make([]fabric.Answer, 4)); err == nil {
		t.Error("Poll on a cancelled context returned no error")
	}
}
