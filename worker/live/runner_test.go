package live

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
	"github.com/rdmamesh/rdmamesh/internal/liveplan"
	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
)

// mesh is n simulated workers probing each other on two rails, with a
// clock running 100x faster than the wall so 10 s windows pass in 0.1 s.
type mesh struct {
	fab     *sim.Fabric
	runners map[string]*Runner
	plan    *liveplan.Plan
	now     func() time.Time
}

func newMesh(t *testing.T, n int, p liveplan.Params) *mesh {
	t.Helper()
	fab, err := sim.New(sim.Config{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	now := func() time.Time { return start.Add(100 * time.Since(start)) }
	m := &mesh{fab: fab, runners: map[string]*Runner{}, now: now}
	var members []liveplan.Member
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("node-%02d", i)
		node := fab.Node(name)
		ports, err := node.Ports(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		r := New(name, node, Options{Tick: 5 * time.Millisecond, Now: now, LossTimeout: 2 * time.Second}, nil)
		addrs, err := r.Open(context.Background(), ports[:2])
		if err != nil {
			t.Fatal(err)
		}
		m.runners[name] = r
		mem := liveplan.Member{Name: name, Group: fmt.Sprintf("leaf-%d", (i-1)/4)}
		for rail := 0; rail < 2; rail++ {
			mem.Rails = append(mem.Rails, rail)
			mem.Addrs = append(mem.Addrs, addrs[rail])
		}
		members = append(members, mem)
	}
	m.plan, _, err = liveplan.New(1, members, p, now())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, r := range m.runners {
		if !r.SetPlan(m.plan) {
			t.Fatal("SetPlan refused the first plan")
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = r.Run(ctx)
		}()
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	return m
}

// collect waits until every runner has finished windows beyond after and
// returns their summaries of windows after it.
func (m *mesh) collect(t *testing.T, after int64, windows int64) []liveplan.Summary {
	t.Helper()
	var all []liveplan.Summary
	wait.Within(t, 20*time.Second, fmt.Sprintf("the runners to finish %d windows after %d", windows, after), func() bool {
		all = all[:0]
		ready := true
		for _, r := range m.runners {
			latest, s := r.Summaries(after)
			ready = ready && latest >= after+windows
			all = append(all, s...)
		}
		return ready
	})
	return all
}

type tally struct{ answered, lost int }

func (t tally) loss() float64 { return float64(t.lost) / float64(max(1, t.answered+t.lost)) }

func TestLiveMeshSeesALossyHCA(t *testing.T) {
	m := newMesh(t, 8, liveplan.Params{RatePerHCA: 40, GroupRate: 2, ProbesPerWindow: 50})
	w, _ := m.plan.WindowAt(m.now())
	healthy := m.collect(t, w, 2)
	for _, s := range healthy {
		if s.Lost > 0 {
			t.Fatalf("healthy fabric: %+v lost probes", s)
		}
	}

	faults, err := sim.ParseFaults([]string{"node-05/mlx5_0:loss=20%"})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.fab.SetFaults(faults); err != nil {
		t.Fatal(err)
	}
	w, _ = m.plan.WindowAt(m.now())
	var toBad, others, rail1 tally
	for _, s := range m.collect(t, w+1, 3) { // w+1: the first whole window under the fault
		switch {
		case s.Rail == 1:
			rail1.answered += s.Answered
			rail1.lost += s.Lost
		case s.Node == "node-05":
			toBad.answered += s.Answered
			toBad.lost += s.Lost
		default:
			others.answered += s.Answered
			others.lost += s.Lost
		}
	}
	t.Logf("loss to node-05/mlx5_0 %.3f (%d answered), to the other rail-0 HCAs %.3f, rail 1 %.3f",
		toBad.loss(), toBad.answered, others.loss(), rail1.loss())
	if toBad.loss() < 0.2 || toBad.loss() > 0.55 { // 1 - 0.8^2 = 0.36 expected
		t.Errorf("loss towards the faulted HCA %.3f, want ~0.36", toBad.loss())
	}
	if rail1.lost != 0 {
		t.Errorf("rail 1 lost %d probes; the fault is on rail 0 only", rail1.lost)
	}
	// node-05 probing others also sends through its lossy HCA: that is
	// the only loss allowed among the other rail-0 targets.
	if others.loss() > toBad.loss() {
		t.Errorf("other targets lose %.3f, more than the faulted HCA", others.loss())
	}
}

func TestHoldPausesAndMarksTheWindow(t *testing.T) {
	m := newMesh(t, 4, liveplan.Params{})
	r := m.runners["node-01"]
	release := r.Hold(0)
	w, _ := m.plan.WindowAt(m.now())
	m.collect(t, w, 2)
	_, mine := r.Summaries(w) // node-01's own, windows wholly under the hold
	if len(mine) == 0 {
		t.Fatal("no summaries from the held runner")
	}
	for _, s := range mine {
		if s.Rail == 0 && (!s.Held || s.Sent != 0) {
			t.Errorf("held rail: window %d to %s sent %d probes (held=%v)", s.Window, s.Node, s.Sent, s.Held)
		}
		if s.Rail == 1 && (s.Held || s.Sent == 0) {
			t.Errorf("rail 1 was not held: window %d to %s sent %d (held=%v)", s.Window, s.Node, s.Sent, s.Held)
		}
	}
	release()
	release() // twice is harmless
	w, _ = m.plan.WindowAt(m.now())
	m.collect(t, w+1, 2)
	_, after := r.Summaries(w + 1)
	sent := 0
	for _, s := range after {
		if s.Rail == 0 {
			sent += s.Sent
		}
	}
	if sent == 0 {
		t.Error("released rail sent nothing")
	}
}

func TestSummariesAreBounded(t *testing.T) {
	m := newMesh(t, 4, liveplan.Params{})
	r := m.runners["node-02"]
	w, _ := m.plan.WindowAt(m.now())
	m.collect(t, w, 10)
	_, all := r.Summaries(-1)
	windows := map[int64]bool{}
	for _, s := range all {
		windows[s.Window] = true
	}
	if len(windows) > r.opts.Keep {
		t.Errorf("kept %d windows, Keep is %d", len(windows), r.opts.Keep)
	}
	if r.SetPlan(m.plan) {
		t.Error("SetPlan accepted a plan that is not newer")
	}
}

var _ fabric.Prober = (*sim.Node)(nil)

// A prober whose port is down cannot send: its summaries say so, so the
// coordinator blames the port rather than every path from it.
func TestDownPortSaysSo(t *testing.T) {
	m := newMesh(t, 4, liveplan.Params{RatePerHCA: 40, GroupRate: 2, ProbesPerWindow: 20})
	faults, err := sim.ParseFaults([]string{"node-02/mlx5_1:down"})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.fab.SetFaults(faults); err != nil {
		t.Fatal(err)
	}
	w, _ := m.plan.WindowAt(m.now())
	m.collect(t, w, 2)
	_, sums := m.runners["node-02"].Summaries(w)
	var down, up int
	for _, s := range sums {
		if s.Window <= w {
			continue // the window the fault struck in
		}
		switch {
		case s.Rail == 1 && s.LocalDown != "" && s.LocalDownFix != "":
			down++
		case s.Rail == 0 && s.LocalDown == "":
			up++
		default:
			t.Errorf("summary %+v", s)
		}
	}
	if down == 0 || up == 0 {
		t.Errorf("rail-1 summaries marked down %d, healthy rail-0 summaries %d", down, up)
	}
}

// A port that was down owes its peers nothing when it comes back: the
// probes it could not send are not sent in a burst afterwards.
func TestDownPortSavesNoCredit(t *testing.T) {
	m := newMesh(t, 4, liveplan.Params{RatePerHCA: 40, GroupRate: 2, ProbesPerWindow: 20})
	faults, err := sim.ParseFaults([]string{"node-02/mlx5_1:down"})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.fab.SetFaults(faults); err != nil {
		t.Fatal(err)
	}
	w, _ := m.plan.WindowAt(m.now())
	m.collect(t, w, 3)
	rp := m.runners["node-02"].rails[1]
	rp.mu.Lock()
	owed := 0.0
	for _, c := range rp.credit {
		owed = max(owed, c)
	}
	rp.mu.Unlock()
	if owed >= 1 {
		t.Errorf("a down port owes %.1f probes to a peer; it would burst them when it comes back", owed)
	}
}
