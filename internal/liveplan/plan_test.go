package liveplan

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

var t0 = time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)

// testFabric is n nodes in groups of size g ("" groups when g == 0), every node
// on rails 0..rails-1 except that node 3 lacks the last rail.
func testFabric(n, g, rails int) []Member {
	ms := make([]Member, n)
	for i := range ms {
		ms[i].Name = fmt.Sprintf("node-%04d", i)
		if g > 0 {
			ms[i].Group = fmt.Sprintf("leaf-%02d", i/g)
		}
		for r := 0; r < rails; r++ {
			if i == 3 && r == rails-1 {
				continue
			}
			ms[i].Rails = append(ms[i].Rails, r)
		}
	}
	return ms
}

func TestCoversEveryPairWithinItsPeriod(t *testing.T) {
	for _, tc := range []struct {
		name           string
		n, group, rail int
		p              Params
	}{
		{"small, no groups", 12, 0, 2, Params{}},
		{"groups of 8", 64, 8, 2, Params{}},
		{"slice of one", 40, 10, 1, Params{RatePerHCA: 10, GroupRate: 1, ProbesPerWindow: 5}},
		{"uneven last slice", 97, 16, 3, Params{RatePerHCA: 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms := testFabric(tc.n, tc.group, tc.rail)
			pl, cov, err := New(1, ms, tc.p, t0)
			if err != nil {
				t.Fatal(err)
			}
			windows := int(cov.Period / pl.Params.Window)
			for _, m := range ms {
				for _, r := range m.Rails {
					seen := map[string]bool{}
					for w := 0; w < windows; w++ {
						at := t0.Add(time.Duration(w)*pl.Params.Window + time.Second)
						rate := 0.0
						for _, tg := range pl.Targets(m.Name, r, at) {
							seen[tg.Node] = true
							rate += tg.Rate
							if tg.Node == m.Name {
								t.Fatalf("%s probes itself", m.Name)
							}
						}
						if rate > pl.Params.RatePerHCA+1e-9 {
							t.Fatalf("%s rail %d window %d sends %.2f probes/s, cap %v", m.Name, r, w, rate, pl.Params.RatePerHCA)
						}
					}
					want := 0
					for _, o := range ms {
						if o.Name != m.Name && hasRail(o, r) {
							want++
							if !seen[o.Name] {
								t.Errorf("%s rail %d never probes %s within %v", m.Name, r, o.Name, cov.Period)
							}
						}
					}
					if len(seen) != want {
						t.Errorf("%s rail %d probed %d peers, want %d", m.Name, r, len(seen), want)
					}
				}
			}
		})
	}
}

func hasRail(m Member, r int) bool {
	for _, x := range m.Rails {
		if x == r {
			return true
		}
	}
	return false
}

// No node should be the rotation target of the whole rail at once: the
// offsets spread the senders over the windows.
func TestRotationSpreadsTheLoad(t *testing.T) {
	ms := testFabric(256, 16, 1)
	pl, _, err := New(1, ms, Params{}, t0)
	if err != nil {
		t.Fatal(err)
	}
	slice, _ := pl.budget(15, 0)
	for w := 0; w < 5; w++ {
		in := map[string]int{}
		for _, m := range ms {
			for _, tg := range pl.Targets(m.Name, 0, t0.Add(time.Duration(w)*pl.Params.Window)) {
				if !tg.InGroup {
					in[tg.Node]++
				}
			}
		}
		for node, k := range in {
			if k > 3*slice {
				t.Errorf("window %d: %s is the rotation target of %d senders, slice is %d", w, node, k, slice)
			}
		}
	}
}

func TestDefaultsAtScale(t *testing.T) {
	for _, n := range []int{1024, 4096} {
		pl, cov, err := New(1, testFabric(n, 32, 8), Params{}, t0)
		if err != nil {
			t.Fatalf("%d nodes: %v", n, err)
		}
		t.Logf("%d nodes x 8 rails, groups of 32: every pair within %v, max rate %.1f/s, plan %d bytes on the wire",
			n, cov.Period, cov.MaxRate, len(wire.LivePlanMsg.Append(nil, new(pl.Wire()))))
		if n == 1024 && cov.Period > 10*time.Minute {
			t.Errorf("defaults cover a 1,024-node fabric every %v, want within 10m", cov.Period)
		}
	}
}

func TestRefusals(t *testing.T) {
	ms := testFabric(64, 32, 1)
	for _, tc := range []struct {
		name string
		p    Params
		want string
	}{
		{"negative rate", Params{RatePerHCA: -1}, "live.rate_per_hca"},
		{"sub-second window", Params{Window: time.Millisecond}, "live.window"},
		{"group over the cap", Params{RatePerHCA: 10, GroupRate: 1}, "lower live.group_rate"},
		{"period out of reach", Params{Period: 10 * time.Second, RatePerHCA: 32}, "live.period"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := New(1, ms, tc.p, t0)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to name %q", err, tc.want)
			}
		})
	}
	if _, _, err := New(1, []Member{{Name: "a"}}, Params{}, t0); err != ErrNoMembers {
		t.Errorf("no rails: err = %v, want ErrNoMembers", err)
	}
}

// Replicas and workers must derive the same targets whatever order they
// learnt the members in (the wire round trip is TestWireRoundTrip's).
func TestDeterministic(t *testing.T) {
	ms := testFabric(50, 8, 2)
	a, _, err := New(7, ms, Params{}, t0)
	if err != nil {
		t.Fatal(err)
	}
	shuffled := append([]Member(nil), ms...)
	rand.New(rand.NewSource(1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	b, _, err := New(7, shuffled, Params{}, t0)
	if err != nil {
		t.Fatal(err)
	}
	at := t0.Add(95 * time.Second)
	for _, m := range ms {
		want := a.Targets(m.Name, 1, at)
		if got := b.Targets(m.Name, 1, at); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: member order changed the targets", m.Name)
		}
	}
	if got := a.Targets("nobody", 0, at); got != nil {
		t.Errorf("unknown node gets targets %v", got)
	}
}

// The plan survives raft and the worker API: the same targets after a
// trip through its wire form.
func TestWireRoundTrip(t *testing.T) {
	ms := testFabric(20, 4, 2)
	for i := range ms {
		for _, r := range ms[i].Rails {
			ms[i].Addrs = append(ms[i].Addrs, fabric.ProbeAddr{Node: ms[i].Name, Device: fmt.Sprintf("mlx5_%d", r), QPN: uint32(100 + i), QKey: 7})
		}
	}
	a, _, err := New(4, ms, Params{Period: 5 * time.Minute}, t0)
	if err != nil {
		t.Fatal(err)
	}
	w := a.Wire()
	b, err := FromWire(w)
	if err != nil {
		t.Fatal(err)
	}
	at := t0.Add(33 * time.Second)
	for _, m := range ms {
		if got, want := b.Targets(m.Name, 1, at), a.Targets(m.Name, 1, at); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: targets changed over the wire", m.Name)
		}
	}
	w.RatePerHCA = -3
	if _, err := FromWire(w); err == nil {
		t.Error("a plan with a negative rate came back from the wire")
	}
	s := Summary{Node: "x", Rail: 1, Window: 9, Sent: 5, Answered: 4, Lost: 1, P50Ns: 3, Held: true}
	if got := SummaryFromWire(WireSummary(s)); got != s {
		t.Errorf("summary %+v came back %+v", s, got)
	}
}
