package sweep

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

func testDefaults() Defaults {
	return Defaults{Params: probe.DefaultTestParams(), PairTimeout: 10 * time.Second, Mode: "full",
		Retests: 2, Profiles: map[string]matrix.Thresholds{"ndr": matrix.DefaultThresholds()}}
}

func intp(v int) *int { return &v }

func TestResolveSpec(t *testing.T) {
	tests := []struct {
		name      string
		req       api.SweepRequest
		wantField string // "" = valid
		check     func(t *testing.T, s Spec, mode string)
	}{
		{name: "defaults", req: api.SweepRequest{}, check: func(t *testing.T, s Spec, mode string) {
			t.Helper()
			if mode != "full" || s.Pattern != PatternAllPairs || s.RailMode != "same" || s.Retests != 2 || s.Params.BWSize == 0 {
				t.Fatalf("defaults not applied: mode %s spec %+v", mode, s)
			}
		}},
		{name: "quick drops bandwidth", req: api.SweepRequest{Mode: "quick"}, check: func(t *testing.T, s Spec, _ string) {
			t.Helper()
			if s.Params.BWSize != 0 {
				t.Fatalf("quick sweep still streams %d-byte writes", s.Params.BWSize)
			}
		}},
		{name: "every field", req: api.SweepRequest{Pattern: "k-batch", BatchSize: 8, RailMode: "cross", Rails: []int{3, 1, 3},
			Budget: "90s", Retests: intp(0), Profile: "ndr", Connect: "rdmacm", PairTimeout: "4s"},
			check: func(t *testing.T, s Spec, _ string) {
				t.Helper()
				if s.BatchSize != 8 || s.RailMode != "cross" || len(s.Rails) != 2 || s.Rails[0] != 1 || s.Budget != 90*time.Second ||
					s.Retests != 0 || s.Profile != "ndr" || s.Params.Connect != "rdmacm" || s.PairTimeout != 4*time.Second {
					t.Fatalf("spec %+v", s)
				}
			}},
		{name: "bad mode", req: api.SweepRequest{Mode: "fast"}, wantField: "mode"},
		{name: "bad pattern", req: api.SweepRequest{Pattern: "ring"}, wantField: "pattern"},
		{name: "k-batch without size", req: api.SweepRequest{Pattern: "k-batch"}, wantField: "batch_size"},
		{name: "one-to-all without root", req: api.SweepRequest{Pattern: "one-to-all"}, wantField: "root"},
		{name: "bad rail mode", req: api.SweepRequest{RailMode: "diagonal"}, wantField: "rail_mode"},
		{name: "negative rail", req: api.SweepRequest{Rails: []int{-1}}, wantField: "rails"},
		{name: "bad budget", req: api.SweepRequest{Budget: "soon"}, wantField: "budget"},
		{name: "too many retests", req: api.SweepRequest{Retests: intp(9)}, wantField: "retests"},
		{name: "unknown profile", req: api.SweepRequest{Profile: "hdr"}, wantField: "profile"},
		{name: "bad connect", req: api.SweepRequest{Connect: "tcp"}, wantField: "connect"},
		{name: "bad pair timeout", req: api.SweepRequest{PairTimeout: "-1s"}, wantField: "pair_timeout"},
		{name: "links across rails", req: api.SweepRequest{Pattern: "links", RailMode: "cross"}, wantField: "rail_mode"},
		{name: "fabric over rdma cm", req: api.SweepRequest{Pattern: "fabric", Connect: "rdmacm"}, wantField: "connect"},
		{name: "bad iterations", req: api.SweepRequest{LatencyIters: 5_000_000}, wantField: "latency_iters"},
	}
	d := testDefaults()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, mode, resolved, err := Resolve(d, tc.req)
			if tc.wantField != "" {
				var re *RequestError
				if !errors.As(err, &re) || re.Field() != tc.wantField {
					t.Fatalf("error %v; want a request error on %s", err, tc.wantField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resolved.Mode != mode || resolved.Pattern != spec.Pattern || resolved.Retests == nil {
				t.Fatalf("resolved request %+v does not say what runs", resolved)
			}
			tc.check(t, spec, mode)
		})
	}
}

func TestSelectNodes(t *testing.T) {
	inv := func(labels map[string]string) *probe.Inventory { return &probe.Inventory{Labels: labels} }
	known := []api.NodeInfo{
		{Name: "gpu001", Role: "worker", State: "alive", Inventory: inv(map[string]string{"rack": "r1"})},
		{Name: "gpu002", Role: "worker", State: "dead", Inventory: inv(map[string]string{"rack": "r1"})},
		{Name: "gpu003", Role: "worker", State: "alive", Inventory: inv(map[string]string{"rack": "r2"})},
		{Name: "gpu004", Role: "worker", State: "left"},
		{Name: "coord-1", Role: "coordinator", State: "alive"},
	}
	tests := []struct {
		name      string
		req       api.SweepRequest
		want      string
		wantField string
	}{
		{name: "all workers that did not leave", want: "gpu001,gpu002,gpu003"},
		{name: "hostlist", req: api.SweepRequest{Hosts: "gpu[001,003]"}, want: "gpu001,gpu003"},
		{name: "labels", req: api.SweepRequest{Labels: map[string]string{"rack": "r1"}}, want: "gpu001,gpu002"},
		{name: "hostlist and labels", req: api.SweepRequest{Hosts: "gpu[001-003]", Labels: map[string]string{"rack": "r2"}}, want: "gpu003"},
		{name: "names", req: api.SweepRequest{Nodes: []string{"gpu002", "gpu003"}}, want: "gpu002,gpu003"},
		{name: "host without a worker", req: api.SweepRequest{Hosts: "gpu[001-009]"}, wantField: "hosts"},
		{name: "a node that left has no worker", req: api.SweepRequest{Nodes: []string{"gpu004"}}, wantField: "nodes"},
		{name: "bad hostlist", req: api.SweepRequest{Hosts: "gpu[003-001]"}, wantField: "hosts"},
		{name: "no such label", req: api.SweepRequest{Labels: map[string]string{"rack": "r9"}}, wantField: "labels"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := selectKnown(known, tc.req)
			if tc.wantField != "" {
				var re *RequestError
				if !errors.As(err, &re) || re.Field() != tc.wantField {
					t.Fatalf("error %v; want a request error on %s", err, tc.wantField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, n := range got {
				names = append(names, n.Name)
			}
			if s := strings.Join(names, ","); s != tc.want {
				t.Fatalf("selected %s; want %s", s, tc.want)
			}
		})
	}
}

func portsN(n int) []probe.Port {
	ps := make([]probe.Port, n)
	for i := range ps {
		ps[i] = probe.Port{Device: "mlx5_" + string(rune('0'+i)), Port: 1, Rail: i, Usable: true, State: "ACTIVE"}
	}
	return ps
}

func TestRailPhases(t *testing.T) {
	a, b := matrix.Node{Name: "a", Ports: portsN(4)}, matrix.Node{Name: "b", Ports: portsN(3)}
	tests := []struct {
		mode          string
		rails         []int
		phases, links int
	}{
		{"same", nil, 1, 3},
		{"cross", nil, 2, 6},
		{"all", nil, 3, 9},
		{"same", []int{0, 2}, 1, 2},
		{"cross", []int{0, 2, 3}, 1, 2}, // rail 3 is not on b
	}
	for _, tc := range tests {
		ph := RailPhases(Spec{RailMode: tc.mode, Rails: tc.rails}, a, b)
		links := 0
		for _, p := range ph {
			seenA, seenB := map[int]bool{}, map[int]bool{}
			for _, rp := range p {
				if seenA[rp.Rail] || seenB[rp.Dst.Rail] {
					t.Fatalf("%s: an HCA appears twice in one phase: %+v", tc.mode, p)
				}
				seenA[rp.Rail], seenB[rp.Dst.Rail] = true, true
				if tc.mode == "same" && rp.Rail != rp.Dst.Rail || tc.mode == "cross" && rp.Rail == rp.Dst.Rail {
					t.Fatalf("%s: link %d → %d", tc.mode, rp.Rail, rp.Dst.Rail)
				}
				if rp.Src.Device != a.Ports[rp.Rail].Device || rp.Dst.Device != b.Ports[rp.Dst.Rail].Device {
					t.Fatalf("%s: devices %s → %s for rails %d → %d", tc.mode, rp.Src.Device, rp.Dst.Device, rp.Rail, rp.Dst.Rail)
				}
			}
			links += len(p)
		}
		if len(ph) != tc.phases || links != tc.links {
			t.Errorf("%s %v: %d phases %d links; want %d and %d", tc.mode, tc.rails, len(ph), links, tc.phases, tc.links)
		}
	}
}

func TestRetestPairs(t *testing.T) {
	slowCell := func(src, dst string, retests int) matrix.Result {
		r := matrix.Result{Cell: matrix.Cell{Src: src, Dst: dst, Class: probe.ClassOK}, Verdict: matrix.VerdictSlowLatency}
		r.Retests = make([]matrix.Attempt, retests)
		return r
	}
	m := &matrix.Matrix{Cells: []matrix.Result{
		slowCell("b", "a", 0), slowCell("a", "b", 0), // one pair, both directions
		slowCell("c", "d", 1), // retested once already: only for pass 2
		{Cell: matrix.Cell{Src: "e", Dst: "f", Class: probe.ClassPortDown}, Verdict: matrix.VerdictFailed},
	}}
	// x is slow towards everyone: only retestPerNode of its pairs are retested.
	for i := 0; i < 10; i++ {
		m.Cells = append(m.Cells, slowCell("x", string(rune('k'+i)), 0))
	}
	got := RetestPairs(m, 1)
	want := []scheduler.Pair{{A: "a", B: "b"}, {A: "k", B: "x"}, {A: "l", B: "x"}, {A: "m", B: "x"}, {A: "n", B: "x"}}
	if len(got) != len(want) {
		t.Fatalf("pass 1 retests %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("pass 1 retests %v; want %v", got, want)
		}
	}
	if got := RetestPairs(m, 2); len(got) != 1 || got[0] != (scheduler.Pair{A: "c", B: "d"}) {
		t.Fatalf("pass 2 retests %v; want only c-d, the pair pass 1 retested and still found slow", got)
	}
}

func TestRetestSkipsSystemicFailures(t *testing.T) {
	failed := func(src, dst string, rail int) matrix.Result {
		return matrix.Result{Cell: matrix.Cell{Src: src, Dst: dst, Rail: rail, Class: probe.ClassRetryExceeded}, Verdict: matrix.VerdictFailed}
	}
	m := &matrix.Matrix{
		Cells: []matrix.Result{failed("a", "b", 0), failed("c", "d", 1), failed("e", "f", 2)},
		// Rail 1 is mostly down; node e fails everywhere; a-b on rail 0 is a lone flake.
		RailRollups: []matrix.Rollup{{Key: "rail-0", Cells: 30, Failed: 1}, {Key: "rail-1", Cells: 30, Failed: 20}, {Key: "rail-2", Cells: 30, Failed: 10}},
		NodeRollups: []matrix.Rollup{{Key: "a", Cells: 20, Failed: 1}, {Key: "e", Cells: 20, Failed: 19}},
	}
	got := RetestPairs(m, 1)
	if len(got) != 1 || got[0] != (scheduler.Pair{A: "a", B: "b"}) {
		t.Fatalf("retests %v; want only the lone flake a-b", got)
	}
}
