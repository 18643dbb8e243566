package web

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
	"github.com/rdmamesh/rdmamesh/web/internal/synth"
)

// The grid says which view shows a sweep's faults, and why, from the
// status codes of every rail.
func TestOverviewPicksTheView(t *testing.T) {
	const n, rails = 32, 4
	for _, tc := range []struct {
		name     string
		faults   synth.Faults
		rails    int
		view     string
		badRails []int
		why      []string
	}{
		// Every node's mlx5_2 down: the worst of all rails is all failed.
		{"rail-wide", synth.Faults{RailDown: 2}, rails, "rails", []int{2},
			[]string{"rail 2 is 100% bad", "mlx5_2 on 32 of 32 nodes", "all rails at once would be 100% bad"}},
		// A rail-wide fault beside the standard ones: still one bad rail.
		{"rail-wide among others", synth.Faults{Standard: true, RailDown: 3}, rails, "rails", []int{3}, []string{"rail 3 is 100% bad"}},
		// One dead HCA, a slow node, a slow group: crosses and bands.
		{"components", synth.StandardFaults, rails, "pairs", nil, []string{"node pairs", "are bad on some rail", "no rail is bad across the fabric"}},
		{"healthy", synth.NoFaults, rails, "pairs", nil, []string{"no pair is bad on any rail"}},
		// One rail, all of it down: nothing to separate, the square is the truth.
		{"only rail down", synth.Faults{RailDown: 0}, 1, "pairs", []int{0}, []string{"fault is fabric-wide"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := getGridInfo(t, serve(t, synthBackend(synth.MatrixWith(n, tc.rails, tc.faults))))
			o := g.Overview
			if o.View != tc.view || fmt.Sprint(o.BadRails) != fmt.Sprint(tc.badRails) {
				t.Fatalf("view %q bad rails %v, want %q %v (%+v)", o.View, o.BadRails, tc.view, tc.badRails, o)
			}
			for _, w := range tc.why {
				if !strings.Contains(o.Why, w) {
					t.Errorf("why %q lacks %q", o.Why, w)
				}
			}
			if len(o.RailBad) != tc.rails {
				t.Fatalf("rail_bad %v for %d rails", o.RailBad, tc.rails)
			}
			for _, r := range tc.badRails {
				if o.RailBad[r] != 1 {
					t.Errorf("rail %d: %.3f bad, want all of it", r, o.RailBad[r])
				}
			}
		})
	}
}

// The shares agree with the grid's counts: the standard faults on 4 rails.
func TestOverviewShares(t *testing.T) {
	const n, rails = 40, 4
	m := synth.Matrix(n, rails)
	v := mustView(t, m)
	o := v.overview()
	bad := make([]int, rails)
	tested := make([]int, rails)
	for _, c := range m.Materialize().Cells {
		tested[c.Rail]++
		if isBad(c.Verdict) {
			bad[c.Rail]++
		}
	}
	for r := range rails {
		if want := float64(bad[r]) / float64(tested[r]); math.Abs(o.RailBad[r]-want) > 1e-12 {
			t.Errorf("rail %d: %.4f bad, cells say %.4f", r, o.RailBad[r], want)
		}
	}
	// A pair is bad when any rail of it is: at least the worst rail's share.
	for r := range rails {
		if o.AllBad < o.RailBad[r] {
			t.Errorf("all rails %.4f < rail %d's %.4f", o.AllBad, r, o.RailBad[r])
		}
	}
	if o2 := v.overview(); o2.Why != o.Why {
		t.Error("a second overview differs")
	}
}

func TestPctAndThousands(t *testing.T) {
	for x, want := range map[float64]string{0: "0%", 0.001: "<1%", 0.37: "37%", 0.996: ">99%", 1: "100%"} {
		if got := pct(x); got != want {
			t.Errorf("pct(%g) = %q, want %q", x, got, want)
		}
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1047552: "1,047,552", -12345: "-12,345"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// With a rail-wide fault the page opens on every rail's status layer, so
// the preparer readies them with the grid.
func TestPrepareReadiesEachRailForRailsView(t *testing.T) {
	f := doneBackend(synth.MatrixWith(24, 3, synth.Faults{RailDown: 1}))
	s := New(f, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	startPrepare(t, ctx, s, cancel)
	wait.For(t, "the first-paint views", func() bool { return s.Prepared("big") })
	m, _ := f.Matrix("big")
	e := s.views.lookup(m)
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, rail := range []int{allRails, 0, 1, 2} {
		if _, ok := e.blobs[layerKey("status", rail)]; !ok {
			t.Errorf("status layer of rail %d not prepared", rail)
		}
	}
}
