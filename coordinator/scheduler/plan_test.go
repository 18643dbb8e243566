package scheduler

import (
	"fmt"
	"math/rand"
	"testing"
)

// checkPlan asserts what every planner promises: rounds numbered 0..n-1, no
// node twice in a round, at most perRound pairs a round (0: no limit), and
// every wanted unordered pair planned exactly once, nothing else.
func checkPlan(t *testing.T, rounds []Round, want map[Pair]bool, perRound int) {
	t.Helper()
	seen := map[Pair]int{}
	for i, rd := range rounds {
		if rd.Index != i {
			t.Fatalf("round %d has index %d", i, rd.Index)
		}
		if len(rd.Pairs) == 0 {
			t.Fatalf("round %d is empty", i)
		}
		if perRound > 0 && len(rd.Pairs) > perRound {
			t.Fatalf("round %d has %d pairs, limit %d", i, len(rd.Pairs), perRound)
		}
		busy := map[string]bool{}
		for _, p := range rd.Pairs {
			if p.A == p.B {
				t.Fatalf("round %d: self pair %v", i, p)
			}
			for _, x := range []string{p.A, p.B} {
				if busy[x] {
					t.Fatalf("round %d: %s in two tests", i, x)
				}
				busy[x] = true
			}
			seen[key(p)]++
		}
	}
	for p := range want {
		if seen[p] != 1 {
			t.Fatalf("pair %v planned %d times", p, seen[p])
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("%d distinct pairs planned, want %d", len(seen), len(want))
	}
}

func key(p Pair) Pair { return Pair{A: min(p.A, p.B), B: max(p.A, p.B)} }

func allPairsOf(nodes []string) map[Pair]bool {
	out := map[Pair]bool{}
	for i := range nodes {
		for j := i + 1; j < len(nodes); j++ {
			out[key(Pair{nodes[i], nodes[j]})] = true
		}
	}
	return out
}

func TestKBatch(t *testing.T) {
	for n := 1; n <= 17; n++ {
		for k := 1; k <= n; k++ {
			t.Run(fmt.Sprintf("n%d/k%d", n, k), func(t *testing.T) {
				nodes := names(n)
				rounds, err := KBatch(nodes, k)
				if err != nil {
					t.Fatal(err)
				}
				want := allPairsOf(nodes)
				checkPlan(t, rounds, want, k)
				if lower := (len(want) + k - 1) / k; len(rounds) < lower {
					t.Fatalf("%d rounds, fewer than the bound %d", len(rounds), lower)
				}
				if k >= n/2 {
					circle, _ := AllPairs(nodes)
					if len(rounds) != len(circle) {
						t.Fatalf("k >= n/2: %d rounds, want the circle's %d", len(rounds), len(circle))
					}
				}
			})
		}
	}
}

// Packing must stay near the bound at scale, and fast: a quadratic carry
// would take minutes here.
func TestKBatchLarge(t *testing.T) {
	nodes := names(1024)
	rounds, err := KBatch(nodes, 8)
	if err != nil {
		t.Fatal(err)
	}
	pairs := 1024 * 1023 / 2
	lower := (pairs + 7) / 8
	if len(rounds) < lower || len(rounds) > lower+lower/100 {
		t.Fatalf("%d rounds for %d pairs at k=8; bound %d", len(rounds), pairs, lower)
	}
	checkPlan(t, rounds, allPairsOf(nodes), 8)
}

func TestKBatchRejects(t *testing.T) {
	if _, err := KBatch(names(4), 0); err == nil {
		t.Error("k=0 accepted")
	}
	if _, err := KBatch([]string{"a", "a"}, 1); err == nil {
		t.Error("duplicate names accepted")
	}
}

func TestOneToAll(t *testing.T) {
	nodes := names(9)
	rounds, err := OneToAll(nodes, "node-04")
	if err != nil {
		t.Fatal(err)
	}
	want := map[Pair]bool{}
	for _, n := range nodes {
		if n != "node-04" {
			want[key(Pair{"node-04", n})] = true
		}
	}
	checkPlan(t, rounds, want, 1)
	for _, rd := range rounds {
		if rd.Pairs[0].A != "node-04" {
			t.Fatalf("round %d: root does not initiate: %v", rd.Index, rd.Pairs[0])
		}
	}
	for name, call := range map[string]func() error{
		"unknown root": func() error { _, err := OneToAll(nodes, "node-99"); return err },
		"duplicates":   func() error { _, err := OneToAll([]string{"a", "a"}, "a"); return err },
	} {
		if call() == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if rounds, err := OneToAll([]string{"a"}, "a"); err != nil || len(rounds) != 0 {
		t.Errorf("a lone root: %v, %v", rounds, err)
	}
}

func TestRetest(t *testing.T) {
	p := func(a, b string) Pair { return Pair{A: a, B: b} }
	cases := []struct {
		name   string
		in     []Pair
		rounds int
	}{
		{"nothing", nil, 0},
		{"matching", []Pair{p("a", "b"), p("c", "d"), p("e", "f")}, 1},
		{"star of five", []Pair{p("x", "a"), p("x", "b"), p("x", "c"), p("x", "d"), p("x", "e")}, 5},
		{"triangle", []Pair{p("a", "b"), p("b", "c"), p("c", "a")}, 3},
		{"path", []Pair{p("a", "b"), p("b", "c"), p("c", "d"), p("d", "e")}, 2},
		{"repeats either way", []Pair{p("a", "b"), p("b", "a"), p("a", "b")}, 1},
		{"dead node plus a bad cable", []Pair{p("n3", "n1"), p("n3", "n2"), p("n3", "n4"), p("n5", "n6")}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rounds, err := Retest(c.in)
			if err != nil {
				t.Fatal(err)
			}
			want := map[Pair]bool{}
			for _, q := range c.in {
				want[key(q)] = true
			}
			checkPlan(t, rounds, want, 0)
			if len(rounds) != c.rounds {
				t.Fatalf("%d rounds, want %d: %+v", len(rounds), c.rounds, rounds)
			}
		})
	}
	if rounds, _ := Retest([]Pair{p("b", "a"), p("a", "b")}); rounds[0].Pairs[0] != p("b", "a") {
		t.Errorf("first listing should decide the initiator: %+v", rounds)
	}
	for _, bad := range [][]Pair{{p("a", "a")}, {p("", "b")}} {
		if _, err := Retest(bad); err == nil {
			t.Errorf("Retest(%v) accepted", bad)
		}
	}
}

// Random suspect sets: always disjoint, complete, and within the greedy
// colouring bound 2Δ-1.
func TestRetestRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	nodes := names(40)
	for trial := 0; trial < 200; trial++ {
		var in []Pair
		for i := rng.Intn(120); i > 0; i-- {
			a, b := nodes[rng.Intn(len(nodes))], nodes[rng.Intn(len(nodes))]
			if a != b {
				in = append(in, Pair{a, b})
			}
		}
		rounds, err := Retest(in)
		if err != nil {
			t.Fatal(err)
		}
		want := map[Pair]bool{}
		degree := map[string]int{}
		for _, q := range in {
			if !want[key(q)] {
				degree[q.A]++
				degree[q.B]++
			}
			want[key(q)] = true
		}
		checkPlan(t, rounds, want, 0)
		maxDeg := 0
		for _, d := range degree {
			maxDeg = max(maxDeg, d)
		}
		if len(rounds) < maxDeg || (maxDeg > 0 && len(rounds) > 2*maxDeg-1) {
			t.Fatalf("trial %d: %d rounds for max degree %d", trial, len(rounds), maxDeg)
		}
	}
}

func TestRailPlan(t *testing.T) {
	cases := []struct {
		mode          RailMode
		rails         int
		phases, links int
	}{
		{RailsSame, 8, 1, 8},
		{"", 2, 1, 2},
		{RailsCross, 8, 7, 56},
		{RailsCross, 1, 0, 0},
		{RailsAll, 8, 8, 64},
		{RailsAll, 1, 1, 1},
		{RailsCross, 3, 2, 6},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%d", c.mode, c.rails), func(t *testing.T) {
			phases, err := RailPlan(c.mode, c.rails)
			if err != nil {
				t.Fatal(err)
			}
			if len(phases) != c.phases {
				t.Fatalf("%d phases, want %d", len(phases), c.phases)
			}
			seen := map[RailLink]bool{}
			for pi, ph := range phases {
				usedA, usedB := map[int]bool{}, map[int]bool{}
				for _, l := range ph {
					if usedA[l.A] || usedB[l.B] {
						t.Fatalf("phase %d uses a rail twice: %v", pi, ph)
					}
					usedA[l.A], usedB[l.B] = true, true
					if seen[l] {
						t.Fatalf("link %v planned twice", l)
					}
					seen[l] = true
					same := l.A == l.B
					if (c.mode == RailsCross && same) || ((c.mode == RailsSame || c.mode == "") && !same) {
						t.Fatalf("mode %s planned %v", c.mode, l)
					}
					if l.A < 0 || l.A >= c.rails || l.B < 0 || l.B >= c.rails {
						t.Fatalf("link %v outside %d rails", l, c.rails)
					}
				}
			}
			if len(seen) != c.links {
				t.Fatalf("%d links, want %d", len(seen), c.links)
			}
		})
	}
	if _, err := RailPlan(RailsSame, 0); err == nil {
		t.Error("0 rails accepted")
	}
	if _, err := RailPlan("diagonal", 4); err == nil {
		t.Error("unknown mode accepted")
	}
}

func TestParseRailMode(t *testing.T) {
	for in, want := range map[string]RailMode{"": RailsSame, "same": RailsSame, "cross": RailsCross, "all": RailsAll} {
		if got, err := ParseRailMode(in); err != nil || got != want {
			t.Errorf("ParseRailMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseRailMode("Same"); err == nil {
		t.Error("ParseRailMode accepted a misspelling")
	}
}

func BenchmarkKBatch1024(b *testing.B) {
	nodes := names(1024)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := KBatch(nodes, 8); err != nil {
			b.Fatal(err)
		}
	}
}
