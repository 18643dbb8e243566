package idle

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/testkit/procstat"
	"github.com/rdmamesh/rdmamesh/rigs/deploytest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	deploytest.CleanupShared()
	os.Exit(code)
}

// buildBin is the rdmamesh binary, built once for the package's tests
// (DEPLOYTEST_BIN names a prebuilt one).
func buildBin(t *testing.T) string {
	t.Helper()
	cli, err := deploytest.SharedCLI()
	if err != nil {
		t.Fatal(err)
	}
	return cli.Path
}

// TestRunSmall keeps `make idle-cost` working: the real binary's worker
// joins a pool of 16 with a gossip key, converges, settles, takes a live
// plan and is measured.
// It checks the harness's mechanics and that the figures are readings,
// never how fast anything is.
func TestRunSmall(t *testing.T) {
	if procstat.RSS(procstat.Self) == 0 {
		t.Skip("no /proc")
	}
	bin := buildBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var log strings.Builder
	r, err := Run(ctx, Config{Bin: bin, Members: 16, Key: true, Live: true, Window: 3 * time.Second, Calm: time.Second, Wait: 2 * time.Minute,
		Dir: t.TempDir(), Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	t.Logf("%+v", r)
	if !r.Live || r.ProbeRate <= 0 {
		t.Errorf("the worker took no live plan: live %v, %v probes/s", r.Live, r.ProbeRate)
	}
	if r.WorkerSees != 16 || r.PeersMin != 16 || r.PeersMax != 16 {
		t.Errorf("convergence: the worker sees %d, the peers %d..%d; want 16", r.WorkerSees, r.PeersMin, r.PeersMax)
	}
	if r.Window < 3*time.Second || r.JoinCPU <= 0 || r.CPU < 0 || r.CPU > 1 || r.HarnessCPU <= 0 {
		t.Errorf("CPU readings: window %s, join CPU %s, worker %.4f, harness %.4f", r.Window, r.JoinCPU, r.CPU, r.HarnessCPU)
	}
	// clear_refs made VmHWM restart at the window's start: every later
	// RSS sample is at most it, give or take the kernel's per-thread RSS
	// counter caches (up to 64 pages a thread are not yet folded into the
	// mm's count, so VmRSS and VmHWM can disagree by that much: 60 pages
	// once in CI), and a Go process holds a few MB.
	const rssSlack = 4 << 20
	if r.RSSMean < 4<<20 || r.RSSMax < r.RSSMean || r.HWM+rssSlack < r.RSSMax || r.JoinHWM < 4<<20 || r.RSSMax > 1<<30 {
		t.Errorf("memory readings: RSS mean %d, max %d, HWM %d, join HWM %d", r.RSSMean, r.RSSMax, r.HWM, r.JoinHWM)
	}
	tr := r.Traffic
	if r.Pings < 2 || r.Acked < 1 || tr.PacketsIn < 1 || tr.PacketsOut < 1 || tr.BytesIn < tr.PacketsIn || tr.BytesOut < tr.PacketsOut {
		t.Errorf("traffic: %d pings, %d acked, %+v", r.Pings, r.Acked, tr)
	}
	if r.GuardHi < r.HarnessRSS {
		t.Errorf("the guard's peak %d is below this process's RSS %d", r.GuardHi, r.HarnessRSS)
	}
	var out strings.Builder
	Table(&out, []Result{r})
	if !strings.Contains(out.String(), "| 16 | on |") {
		t.Errorf("table:\n%s", out.String())
	}
}

// TestRunGuardsItsMemory: past its RSS limit the harness stops with the
// guard's finding, whatever it was doing.
func TestRunGuardsItsMemory(t *testing.T) {
	if procstat.RSS(procstat.Self) == 0 {
		t.Skip("no /proc")
	}
	bin := buildBin(t)
	_, err := Run(context.Background(), Config{Bin: bin, Members: 8, RSSLimit: 1 << 20, Calm: time.Second, Wait: time.Minute, Dir: t.TempDir()})
	var b *procstat.BreachError
	if !errors.As(err, &b) || !strings.Contains(err.Error(), "the idle harness") {
		t.Fatalf("want the memory guard's breach, got %v", err)
	}
}

func TestRunRefusesBadConfig(t *testing.T) {
	if _, err := Run(context.Background(), Config{Bin: "/no/such/rdmamesh", Members: 16}); err == nil || !strings.Contains(err.Error(), "go build") {
		t.Errorf("a missing binary: %v", err)
	}
	if _, err := Run(context.Background(), Config{Bin: "/no/such/rdmamesh", Members: 1}); err == nil || !strings.Contains(err.Error(), "members 1") {
		t.Errorf("a pool of one: %v", err)
	}
}

func TestPushPullInterval(t *testing.T) {
	for n, want := range map[int]time.Duration{3: 30 * time.Second, 32: 30 * time.Second, 33: 60 * time.Second, 128: 90 * time.Second, 1024: 180 * time.Second} {
		if got := pushPullInterval(n); got != want {
			t.Errorf("%d members: %s, want %s", n, got, want)
		}
	}
}

func TestGaugeValue(t *testing.T) {
	text := "# HELP rdmamesh_worker_gossip_members x\n# TYPE rdmamesh_worker_gossip_members gauge\nrdmamesh_worker_gossip_members_total 9\nrdmamesh_worker_gossip_members 1024\n"
	if n, err := gaugeValue(strings.NewReader(text), "rdmamesh_worker_gossip_members"); err != nil || n != 1024 {
		t.Fatalf("%d, %v", n, err)
	}
	if _, err := gaugeValue(strings.NewReader("other 1\n"), "rdmamesh_worker_gossip_members"); err == nil {
		t.Fatal("a missing gauge must be an error")
	}
}
