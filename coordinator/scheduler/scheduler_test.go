package scheduler

import (
	"fmt"
	"testing"
)

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("node-%02d", i+1)
	}
	return out
}

func TestAllPairsCoversEveryPairOnce(t *testing.T) {
	for n := 1; n <= 33; n++ {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			nodes := names(n)
			rounds, err := AllPairs(nodes)
			if err != nil {
				t.Fatal(err)
			}
			wantRounds := n - 1
			if n%2 == 1 {
				wantRounds = n
			}
			if n < 2 {
				wantRounds = 0
			}
			if len(rounds) != wantRounds {
				t.Fatalf("%d rounds, want %d", len(rounds), wantRounds)
			}
			seen := map[[2]string]int{}
			for _, rd := range rounds {
				busy := map[string]bool{}
				if n%2 == 1 && rd.Bye == "" {
					t.Fatalf("round %d: odd n needs a bye", rd.Index)
				}
				if len(rd.Pairs) != n/2 {
					t.Fatalf("round %d: %d pairs, want %d", rd.Index, len(rd.Pairs), n/2)
				}
				for _, p := range rd.Pairs {
					if p.A == p.B {
						t.Fatalf("self pair %v", p)
					}
					for _, x := range []string{p.A, p.B} {
						if busy[x] || x == rd.Bye {
							t.Fatalf("round %d: %s used twice", rd.Index, x)
						}
						busy[x] = true
					}
					k := [2]string{min(p.A, p.B), max(p.A, p.B)}
					seen[k]++
				}
			}
			if len(seen) != n*(n-1)/2 {
				t.Fatalf("%d distinct pairs, want %d", len(seen), n*(n-1)/2)
			}
			for k, c := range seen {
				if c != 1 {
					t.Fatalf("pair %v planned %d times", k, c)
				}
			}
		})
	}
}

func TestAllPairsRejectsBadNames(t *testing.T) {
	cases := map[string][]string{
		"empty name": {"a", ""},
		"duplicate":  {"a", "b", "a"},
	}
	for name, in := range cases {
		if _, err := AllPairs(in); err == nil {
			t.Errorf("%s: accepted %v", name, in)
		}
	}
}

func TestAllPairsBalancesInitiators(t *testing.T) {
	rounds, _ := AllPairs(names(16))
	first := map[string]int{}
	for _, rd := range rounds {
		for _, p := range rd.Pairs {
			first[p.A]++
		}
	}
	if first["node-01"] > 8 {
		t.Fatalf("node-01 initiates first in %d of 15 rounds", first["node-01"])
	}
}

func BenchmarkAllPairs1024(b *testing.B) {
	nodes := names(1024)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := AllPairs(nodes); err != nil {
			b.Fatal(err)
		}
	}
}
