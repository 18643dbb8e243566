package scheduler

import (
	"fmt"
	"sort"
)

// Retest plans a given list of pairs (the suspects of a sweep) into as few
// disjoint rounds as a greedy edge colouring finds. A pair listed twice, in
// either order, is planned once; the first listing decides who initiates.
//
// ClusterKit-style confirmation runs it repeatedly: retest the bad pairs,
// keep those still bad, retest again, so the set roughly halves each pass
// and a pair is declared bad only when it fails every time.
//
// Pairs are coloured busiest nodes first, each into the first round where
// both ends are free. That needs at most 2Δ-1 rounds (Δ = most pairs on one
// node) and, on the stars and matchings retests usually are, exactly Δ.
func Retest(pairs []Pair) ([]Round, error) {
	uniq, err := uniquePairs(pairs)
	if err != nil {
		return nil, err
	}
	degree := map[string]int{}
	for _, p := range uniq {
		degree[p.A]++
		degree[p.B]++
	}
	order := make([]int, len(uniq))
	for i := range order {
		order[i] = i
	}
	weight := func(p Pair) int { return max(degree[p.A], degree[p.B]) }
	sort.SliceStable(order, func(a, b int) bool { return weight(uniq[order[a]]) > weight(uniq[order[b]]) })

	var rounds []Round
	used := []map[string]bool{} // per round: nodes taken
	for _, i := range order {
		p := uniq[i]
		r := 0
		for r < len(rounds) && (used[r][p.A] || used[r][p.B]) {
			r++
		}
		if r == len(rounds) {
			rounds = append(rounds, Round{Index: r})
			used = append(used, map[string]bool{})
		}
		rounds[r].Pairs = append(rounds[r].Pairs, p)
		used[r][p.A], used[r][p.B] = true, true
	}
	return rounds, nil
}

func uniquePairs(pairs []Pair) ([]Pair, error) {
	seen := map[Pair]bool{}
	var out []Pair
	for i, p := range pairs {
		switch {
		case p.A == "" || p.B == "":
			return nil, fmt.Errorf("pair %d (%q, %q) has an empty node name", i, p.A, p.B)
		case p.A == p.B:
			return nil, fmt.Errorf("pair %d pairs %q with itself", i, p.A)
		}
		key := Pair{A: min(p.A, p.B), B: max(p.A, p.B)}
		if !seen[key] {
			seen[key] = true
			out = append(out, p)
		}
	}
	return out, nil
}
