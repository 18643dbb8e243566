package pathtrace

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
)

// fakeTrace answers every flow with a path of one hop, counting the
// traces; complete decides the paths' Complete.
type fakeTrace struct {
	calls    atomic.Int32
	complete bool
	gate     chan struct{} // when set, each trace waits on it
}

func (f *fakeTrace) trace(ctx context.Context, fl Flow, _ Options) (Path, error) {
	f.calls.Add(1)
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return Path{Flow: fl, Why: "stopped"}, nil
		}
	}
	return Path{Flow: fl, Hops: []Hop{{TTL: 1, Addr: leaf1}}, Complete: f.complete}, nil
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) get() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func fakeTracer(f *fakeTrace, c Config) (*Tracer, *clock) {
	tr := NewTracer(c)
	clk := &clock{now: time.Unix(1e9, 0)}
	tr.trace, tr.now = f.trace, clk.get
	return tr, clk
}

func mustTrace(t *testing.T, tr *Tracer, f Flow) Path {
	t.Helper()
	p, err := tr.Trace(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A complete path is answered from the cache for Keep, a path with an
// unknown hop for a tenth of it, and the copy handed out is the caller's.
func TestTracerKeepsPaths(t *testing.T) {
	f := &fakeTrace{complete: true}
	tr, clk := fakeTracer(f, Config{Keep: 10 * time.Minute})
	p := mustTrace(t, tr, flow)
	p.Hops[0].Addr = spine
	if again := mustTrace(t, tr, Flow{Src: host1, Dst: host2, SrcPort: 49152}); f.calls.Load() != 1 || again.Hops[0].Addr != leaf1 {
		t.Fatalf("second trace of the flow: %d traces, hop %v", f.calls.Load(), again.Hops[0].Addr)
	}
	clk.add(10 * time.Minute)
	mustTrace(t, tr, flow)
	if f.calls.Load() != 2 {
		t.Fatalf("%d traces after Keep passed, want 2", f.calls.Load())
	}

	f.complete = false
	other := flow
	other.SrcPort++
	mustTrace(t, tr, other)
	clk.add(59 * time.Second)
	mustTrace(t, tr, other)
	if f.calls.Load() != 3 {
		t.Fatalf("an incomplete path was not kept for a minute: %d traces", f.calls.Load())
	}
	clk.add(time.Second)
	mustTrace(t, tr, other)
	if f.calls.Load() != 4 {
		t.Fatalf("an incomplete path was kept past a tenth of Keep: %d traces", f.calls.Load())
	}
}

// Callers of one flow at once share its trace: they could not both bind
// its source port.
func TestTracerSharesARunningTrace(t *testing.T) {
	f := &fakeTrace{complete: true, gate: make(chan struct{})}
	tr, _ := fakeTracer(f, Config{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if p, err := tr.Trace(context.Background(), flow); err != nil || len(p.Hops) != 1 {
				t.Errorf("shared trace: %+v, %v", p, err)
			}
		})
	}
	wait.For(t, "the first trace to start", func() bool { return f.calls.Load() == 1 })
	close(f.gate)
	wg.Wait()
	if n := f.calls.Load(); n != 1 {
		t.Fatalf("%d traces for one flow, want 1", n)
	}
}

// A trace its caller cancelled is not kept: the next caller traces again.
func TestTracerForgetsCancelledTraces(t *testing.T) {
	f := &fakeTrace{complete: true, gate: make(chan struct{})}
	tr, _ := fakeTracer(f, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tr.Trace(ctx, flow); err != nil {
		t.Fatal(err)
	}
	close(f.gate)
	mustTrace(t, tr, flow)
	if n := f.calls.Load(); n != 2 {
		t.Fatalf("%d traces, want 2: the cancelled one was kept", n)
	}
}

func TestTracerBound(t *testing.T) {
	f := &fakeTrace{complete: true}
	tr, clk := fakeTracer(f, Config{MaxPaths: 2})
	for port := range uint16(3) {
		fl := flow
		fl.SrcPort += port
		mustTrace(t, tr, fl)
		clk.add(time.Second)
	}
	if len(tr.kept) != 2 {
		t.Fatalf("%d paths kept, want MaxPaths 2", len(tr.kept))
	}
	if _, ok := tr.kept[flow]; ok {
		t.Fatal("the oldest path stayed")
	}
}

// A flow without a source port is traced each time, and errors are not
// kept.
func TestTracerDoesNotKeepWhatItCannotKey(t *testing.T) {
	f := &fakeTrace{complete: true}
	tr, _ := fakeTracer(f, Config{})
	unported := flow
	unported.SrcPort = 0
	mustTrace(t, tr, unported)
	mustTrace(t, tr, unported)
	failing := errors.New("pathtrace: source port 49152 on 10.0.1.2 is in use by another socket")
	tr.trace = func(context.Context, Flow, Options) (Path, error) { f.calls.Add(1); return Path{}, failing }
	for range 2 {
		if _, err := tr.Trace(context.Background(), flow); !errors.Is(err, failing) {
			t.Fatalf("err %v", err)
		}
	}
	if n := f.calls.Load(); n != 4 {
		t.Fatalf("%d traces, want 4", n)
	}
}
