package live

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/liveplan"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

func nodes(n, rails int) []matrix.Node {
	out := make([]matrix.Node, n)
	for i := range out {
		out[i] = matrix.Node{Name: fmt.Sprintf("node-%02d", i+1), State: "alive",
			Labels: map[string]string{"leaf": fmt.Sprintf("L%d", i/4)}}
		for r := 0; r < rails; r++ {
			out[i].Ports = append(out[i].Ports, probe.Port{Device: fmt.Sprintf("mlx5_%d", r), Port: 1, Rail: r,
				LinkLayer: "InfiniBand", State: "ACTIVE", RateGbps: 400, Usable: true})
		}
	}
	return out
}

// window gives every ordered pair on every rail one summary; bad says
// what each cell's fate is.
func window(ns []matrix.Node, rails int, w int64, bad func(src, dst string, rail int) (lost int, rttx float64)) map[string][]liveplan.Summary {
	out := map[string][]liveplan.Summary{}
	for _, a := range ns {
		for _, b := range ns {
			if a.Name == b.Name {
				continue
			}
			for r := 0; r < rails; r++ {
				lost, x := bad(a.Name, b.Name, r)
				x = max(x, 1)
				out[a.Name] = append(out[a.Name], liveplan.Summary{Node: b.Name, Rail: r, Window: w, Sent: 20,
					Answered: 20 - lost, Lost: lost, P50Ns: 4000 * x, P99Ns: 4400 * x, MaxNs: 5000 * x})
			}
		}
	}
	return out
}

func fold(m *Matrix, sums map[string][]liveplan.Summary) {
	for src, s := range sums {
		m.Fold(src, s)
	}
}

func TestLiveSuspects(t *testing.T) {
	ns := nodes(8, 2)
	for _, tc := range []struct {
		name            string
		bad             func(src, dst string, rail int) (int, float64)
		kind, node, dev string
		verdict         matrix.Verdict
	}{
		{"lossy HCA", func(s, d string, r int) (int, float64) {
			if r == 0 && (s == "node-05" || d == "node-05") {
				return 6, 1
			}
			return 0, 1
		}, "hca", "node-05", "mlx5_0", matrix.VerdictFailed},
		{"dead port", func(s, d string, r int) (int, float64) {
			if r == 1 && (s == "node-03" || d == "node-03") {
				return 20, 1
			}
			return 0, 1
		}, "hca", "node-03", "mlx5_1", matrix.VerdictFailed},
		{"slow HCA", func(s, d string, r int) (int, float64) {
			if r == 0 && (s == "node-07" || d == "node-07") {
				return 0, 5
			}
			return 0, 1
		}, "hca", "node-07", "mlx5_0", matrix.VerdictSlowLatency},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Options{})
			fold(m, window(ns, 2, 4, tc.bad))
			mx := m.Analyse(ns, matrix.Thresholds{})
			if mx.Healthy {
				t.Fatal("a faulty live window judged healthy")
			}
			if len(mx.Suspects) == 0 {
				t.Fatal("no suspects")
			}
			s := mx.Suspects[0]
			if s.Kind != tc.kind || s.Node != tc.node || s.Device != tc.dev || s.Verdict != tc.verdict {
				t.Errorf("first suspect %s %s %s %s (%s), want %s %s %s %s", s.Kind, s.Node, s.Device, s.Verdict, s.Reason,
					tc.kind, tc.node, tc.dev, tc.verdict)
			}
		})
	}
}

func TestHealthyAndBounded(t *testing.T) {
	ns := nodes(6, 2)
	ok := func(string, string, int) (int, float64) { return 0, 1 }
	m := New(Options{Horizon: 2})
	for w := int64(0); w < 10; w++ {
		fold(m, window(ns, 2, w, ok))
	}
	if mx := m.Analyse(ns, matrix.Thresholds{}); !mx.Healthy || len(mx.Suspects) != 0 {
		t.Errorf("healthy live window: healthy=%v suspects=%v", mx.Healthy, mx.Suspects)
	}
	if got, want := m.Len(), 6*5*2; got != want {
		t.Errorf("held %d cells after 10 windows, want %d (one per cell)", got, want)
	}
	// A node that stops being probed ages out after the horizon.
	for w := int64(10); w < 13; w++ {
		sums := window(ns, 2, w, ok)
		delete(sums, "node-01")
		for src, s := range sums {
			keep := s[:0]
			for _, x := range s {
				if x.Node != "node-01" {
					keep = append(keep, x)
				}
			}
			sums[src] = keep
		}
		fold(m, sums)
	}
	if got, want := m.Len(), 5*4*2; got != want {
		t.Errorf("held %d cells after node-01 went quiet, want %d", got, want)
	}
	// An old window never overwrites a newer one.
	m.Fold("node-02", []liveplan.Summary{{Node: "node-03", Rail: 0, Window: 1, Answered: 0, Lost: 20}})
	for _, c := range m.Cells() {
		if c.Src == "node-02" && c.Dst == "node-03" && c.Rail == 0 && c.Class != probe.ClassOK {
			t.Errorf("a stale window overwrote a newer cell: %+v", c)
		}
	}
}

func TestTooFewProbesStayUntested(t *testing.T) {
	m := New(Options{})
	m.Fold("node-01", []liveplan.Summary{{Node: "node-02", Rail: 0, Window: 1, Sent: 2, Answered: 2},
		{Node: "node-03", Rail: 0, Window: 1, Sent: 30, Answered: 0, Lost: 30, Held: true}})
	cells := m.Cells()
	if len(cells) != 1 || cells[0].Dst != "node-03" {
		t.Errorf("cells %+v: want only the judged one (a held window with enough probes counts)", cells)
	}
}

func TestRailStats(t *testing.T) {
	ns := nodes(4, 2)
	m := New(Options{})
	lossy := func(s, d string, r int) (int, float64) {
		if r == 1 && d == "node-02" {
			return 10, 1
		}
		return 0, 1
	}
	sums := window(ns, 2, 1, lossy)
	fold(m, sums)
	fold(m, sums) // a collection retried: counted once
	rails := m.Rails()
	if len(rails) != 2 {
		t.Fatalf("rails %+v", rails)
	}
	r0, r1 := rails[0], rails[1]
	if r0.ProbesAnswered != 12*20 || r0.ProbesLost != 0 || r0.LossRatio != 0 || r0.BadCells != 0 || r0.Cells != 12 {
		t.Errorf("rail 0: %+v", r0)
	}
	// Three cells into node-02 lose 10 of 20 each: 30 of 240.
	if r1.ProbesLost != 30 || r1.ProbesAnswered != 210 || r1.BadCells != 3 {
		t.Errorf("rail 1: %+v", r1)
	}
	if want := 30.0 / 240; r1.LossRatio != want {
		t.Errorf("rail 1 loss ratio %v, want %v", r1.LossRatio, want)
	}
	if r0.RTTCount != 12 || r0.RTTBuckets[len(r0.RTTBuckets)-1] != 12 || r0.RTTBuckets[0] != 0 {
		t.Errorf("rail 0 RTT histogram: count %d buckets %v (4 µs p50s)", r0.RTTCount, r0.RTTBuckets)
	}
}

// A prober whose own port refuses to send makes its cells port-down with
// the port's words, not a path's retransmissions; its peers' probes to it
// go unanswered.
func TestLocalPortDown(t *testing.T) {
	ns := nodes(8, 2)
	sums := window(ns, 2, 4, func(s, d string, r int) (int, float64) {
		if r == 1 && (s == "node-03" || d == "node-03") {
			return 20, 1
		}
		return 0, 1
	})
	for i, s := range sums["node-03"] {
		if s.Rail == 1 {
			sums["node-03"][i].LocalDown, sums["node-03"][i].LocalDownFix = "mlx5_1 port 1 on node-03 is DOWN", "check the cable"
		}
	}
	m := New(Options{})
	fold(m, sums)
	mx := m.Analyse(ns, matrix.Thresholds{})
	var down int
	for _, c := range m.Cells() {
		if c.Src == "node-03" && c.Rail == 1 {
			if c.Class != probe.ClassPortDown || !strings.Contains(c.Error.Cause, "refuses to send") ||
				!strings.Contains(c.Error.Cause, "is DOWN") || c.Error.Fix != "check the cable" {
				t.Fatalf("cell %+v %+v", c, c.Error)
			}
			down++
		}
	}
	if down != 7 {
		t.Errorf("%d port-down cells from node-03 on rail 1, want 7", down)
	}
	if s := mx.Suspects[0]; s.Kind != "hca" || s.Node != "node-03" || s.Device != "mlx5_1" {
		t.Errorf("first suspect %+v", s)
	}
}

// The analysis reads a snapshot source; it must judge exactly as the same
// cells handed over whole would: verdicts, causes, counts and suspects.
func TestSnapshotMatchesCells(t *testing.T) {
	ns := nodes(12, 3)
	sums := window(ns, 3, 7, func(s, d string, r int) (int, float64) {
		switch {
		case r == 0 && (s == "node-05" || d == "node-05"):
			return 6, 1
		case r == 2 && d == "node-09":
			return 0, 4
		case r == 1 && s == "node-02" && d == "node-11":
			return 3, 1 // 3 of 20 lost: over LossFail
		}
		return 0, 1
	})
	for i, s := range sums["node-07"] {
		if s.Rail == 1 {
			sums["node-07"][i].LocalDown = "mlx5_1 port 1 on node-07 is DOWN"
		}
	}
	sums["node-01"] = append(sums["node-01"], liveplan.Summary{Node: "node-03", Rail: 2, Window: 7, Sent: 2, Answered: 2}) // too few: untested
	m := New(Options{})
	fold(m, sums)
	got := m.Analyse(ns, matrix.Thresholds{})
	th := matrix.DefaultThresholds()
	th.TestedOnly = true
	want := matrix.Analyse(ns, nil, m.Cells(), th)
	if got.Healthy != want.Healthy || !reflect.DeepEqual(got.Counts, want.Counts) || got.NumCells() != want.NumCells() {
		t.Fatalf("healthy %v/%v counts %v/%v cells %d/%d", got.Healthy, want.Healthy, got.Counts, want.Counts, got.NumCells(), want.NumCells())
	}
	for k := range want.NumCells() {
		g, w := got.CellAt(k), want.CellAt(k)
		if g.Verdict != w.Verdict || g.Reason != w.Reason || g.Class != w.Class || !reflect.DeepEqual(g.Error, w.Error) {
			t.Fatalf("cell %d %s->%s rail %d: %s %q %+v, want %s %q %+v", k, w.Src, w.Dst, w.Rail, g.Verdict, g.Reason, g.Error, w.Verdict, w.Reason, w.Error)
		}
	}
	if !reflect.DeepEqual(got.Suspects, want.Suspects) {
		t.Fatalf("suspects\n got %+v\nwant %+v", got.Suspects, want.Suspects)
	}
	if len(got.Suspects) < 3 {
		t.Errorf("%d suspects, want the three faults", len(got.Suspects))
	}
}

// An HCA losing a few percent of its packets fails only some of its cells
// in a window; its probes summed over all its cells convict it, first,
// and the pair suspects around it go.
func TestPartialLossConvictsTheHCA(t *testing.T) {
	ns := nodes(16, 2)
	n := 0
	sums := window(ns, 2, 9, func(s, d string, r int) (int, float64) {
		if r == 0 && (s == "node-05" || d == "node-05") {
			n++
			if n%3 == 0 { // one cell in three loses 2 of its 20 probes: 3.3% of the HCA's
				return 2, 1
			}
		}
		return 0, 1
	})
	m := New(Options{})
	fold(m, sums)
	mx := m.Analyse(ns, matrix.Thresholds{})
	if len(mx.Suspects) == 0 {
		t.Fatal("no suspects")
	}
	s := mx.Suspects[0]
	if s.Kind != matrix.KindHCA || s.Node != "node-05" || s.Device != "mlx5_0" || s.Rail != 0 ||
		!strings.Contains(s.Reason, "of its 600 live probes") || !strings.Contains(s.Fix, "node-05 mlx5_0") {
		t.Fatalf("first suspect %+v", s)
	}
	for _, o := range mx.Suspects[1:] {
		if o.Rail == 0 && (o.Node == "node-05" || o.Peer == "node-05") {
			t.Errorf("a suspect the HCA explains is still listed: %+v", o)
		}
	}
	t.Log(s.Reason)
}
