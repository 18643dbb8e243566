// Package scheduler plans sweep rounds. It is pure: node names in, rounds out.
//
// Vocabulary: a round is a set of disjoint pairs that can be tested at the same
// time without any HCA taking part in two tests; a pair is unordered here and
// the coordinator measures both directions of it inside its round.
package scheduler

import "fmt"

// Pair is an unordered pair of nodes; A is the first initiator.
type Pair struct {
	A string `json:"a"`
	B string `json:"b"`
}

// RailFlow is one rail of a steered pair (Round.Steer): the flow label
// A's QP sends with and B's (0: the provider picks).
type RailFlow struct {
	Rail int    `json:"rail"`
	A    uint32 `json:"a,omitempty"`
	B    uint32 `json:"b,omitempty"`
}

// Round is one set of disjoint pairs. Bye names the node resting this round
// when the node count is odd.
type Round struct {
	Index int    `json:"index"`
	Pairs []Pair `json:"pairs"`
	Bye   string `json:"bye,omitempty"`
	// Steer, when set, is in step with Pairs: pair i is tested on the
	// rails Steer[i] lists only, each end's QPs sending with the flow
	// label given (a link sweep's plan); an empty entry tests every rail
	// the sweep's rail mode gives.
	Steer [][]RailFlow `json:"steer,omitempty"`
}

// AllPairs plans every unordered pair exactly once with the circle method:
// n-1 rounds for even n, n rounds (one bye each) for odd n, so a sweep costs
// O(n) rounds of parallel work instead of O(n²) sequential tests.
func AllPairs(nodes []string) ([]Round, error) {
	if err := checkNames(nodes); err != nil {
		return nil, err
	}
	n := len(nodes)
	if n < 2 {
		return nil, nil
	}
	ring := make([]string, n, n+1)
	copy(ring, nodes)
	if n%2 == 1 {
		ring = append(ring, "") // the bye slot
	}
	m := len(ring)
	rounds := make([]Round, 0, m-1)
	for r := 0; r < m-1; r++ {
		rd := Round{Index: r, Pairs: make([]Pair, 0, m/2)}
		for i := 0; i < m/2; i++ {
			a, b := ring[i], ring[m-1-i]
			switch {
			case a == "":
				rd.Bye = b
			case b == "":
				rd.Bye = a
			case r%2 == 1 && i == 0:
				// The fixed node would otherwise always initiate; alternating
				// spreads the first-initiator role evenly.
				rd.Pairs = append(rd.Pairs, Pair{A: b, B: a})
			default:
				rd.Pairs = append(rd.Pairs, Pair{A: a, B: b})
			}
		}
		rounds = append(rounds, rd)
		rotate(ring)
	}
	return rounds, nil
}

// rotate keeps ring[0] fixed and turns the rest one step clockwise.
func rotate(ring []string) {
	last := ring[len(ring)-1]
	copy(ring[2:], ring[1:len(ring)-1])
	ring[1] = last
}

func checkNames(nodes []string) error {
	seen := make(map[string]struct{}, len(nodes))
	for i, n := range nodes {
		if n == "" {
			return fmt.Errorf("node %d has an empty name", i)
		}
		if _, dup := seen[n]; dup {
			return fmt.Errorf("node %q appears twice: node names must be unique", n)
		}
		seen[n] = struct{}{}
	}
	return nil
}
