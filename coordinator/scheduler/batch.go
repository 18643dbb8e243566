package scheduler

import "fmt"

// KBatch plans every unordered pair exactly once, like AllPairs, but with at
// most k pairs per round. Use it when a full circle round would load the
// fabric (or the coordinator) more than wanted: k = 8 on a 1,024-node
// cluster tests 8 pairs at a time instead of 512.
//
// It takes the pairs in circle order and packs each round greedily with the
// first pending pairs whose nodes are still free, so rounds stay disjoint and
// nearly full: ceil(n(n-1)/2 / k) rounds when k divides the circle rounds
// evenly, a few more otherwise. k >= n/2 gives AllPairs' rounds.
func KBatch(nodes []string, k int) ([]Round, error) {
	if k < 1 {
		return nil, fmt.Errorf("k-batch size %d: want at least 1 pair per round", k)
	}
	circle, err := AllPairs(nodes)
	if err != nil {
		return nil, err
	}
	if k >= len(nodes)/2 {
		return circle, nil
	}
	pending := make([]Pair, 0, len(nodes)*(len(nodes)-1)/2)
	for _, rd := range circle {
		pending = append(pending, rd.Pairs...)
	}
	return pack(pending, k), nil
}

// pack fills rounds of at most k disjoint pairs from pending, in order.
// A pair whose node is busy this round is carried to the next one and tried
// first there. Circle order keeps long runs of disjoint pairs, so only the
// pairs at a circle-round boundary are ever carried and the carry stays
// near 2k: packing is linear in the number of pairs.
func pack(pending []Pair, k int) []Round {
	rounds := make([]Round, 0, len(pending)/k+1)
	var carry []Pair
	stamp := map[string]int{} // node → 1 + the last round that used it
	head := 0
	for head < len(pending) || len(carry) > 0 {
		rd := Round{Index: len(rounds), Pairs: make([]Pair, 0, k)}
		mark := rd.Index + 1
		take := func(p Pair) bool {
			if len(rd.Pairs) == k || stamp[p.A] == mark || stamp[p.B] == mark {
				return false
			}
			stamp[p.A], stamp[p.B] = mark, mark
			rd.Pairs = append(rd.Pairs, p)
			return true
		}
		var keep []Pair
		for _, p := range carry {
			if !take(p) {
				keep = append(keep, p)
			}
		}
		for head < len(pending) && len(rd.Pairs) < k {
			if p := pending[head]; !take(p) {
				keep = append(keep, p)
			}
			head++
		}
		carry = keep
		rounds = append(rounds, rd)
	}
	return rounds
}

// OneToAll plans root against every other node, one pair per round: root's
// HCAs can take part in only one test at a time. It is the quick check of a
// new or repaired node against the fleet (n-1 rounds, each a single pair).
func OneToAll(nodes []string, root string) ([]Round, error) {
	if err := checkNames(nodes); err != nil {
		return nil, err
	}
	found := false
	for _, n := range nodes {
		found = found || n == root
	}
	if !found {
		return nil, fmt.Errorf("root %q is not one of the %d nodes", root, len(nodes))
	}
	var rounds []Round
	for _, n := range nodes {
		if n == root {
			continue
		}
		rounds = append(rounds, Round{Index: len(rounds), Pairs: []Pair{{A: root, B: n}}})
	}
	return rounds, nil
}
