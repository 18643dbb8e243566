package scheduler

import (
	"errors"
	"fmt"
)

// Plane is one rail plane of a two-tier fabric as the link planner sees
// it: the nodes under each leaf, and the spines, each reached from every
// leaf by one uplink.
type Plane struct {
	Leaves [][]string
	Spines int
}

// SteeredTest is one test steered over a spine: From's writes climb its
// leaf's uplink to Spine and come down Spine's link to To's leaf.
type SteeredTest struct {
	From, To string
	Spine    int
}

// LinkSweep plans tests that cross every leaf-spine link of the plane in
// both directions at least twice, each time with another pair of nodes,
// in 2·L·S tests for L leaves and S spines: over every spine s, leaf a
// sends to leaves a+1 and a+2 (mod L), so a's uplink to s carries tests to
// two leaves and s's link down to a tests from two. (With two leaves, a
// sends to the other leaf twice, from other nodes where it has them.) A
// single bad link is then named: no two links carry the same tests.
// Nodes take turns within their leaf, so the tests spread over them.
func LinkSweep(p Plane) ([]SteeredTest, error) {
	L := len(p.Leaves)
	switch {
	case p.Spines < 1:
		return nil, fmt.Errorf("link sweep: %d spines; a plane needs at least one", p.Spines)
	case L < 2:
		return nil, errors.New("link sweep: fewer than two leaves: no test crosses a spine (test within the leaf instead)")
	}
	leafOf := map[string]int{}
	for i, nodes := range p.Leaves {
		if len(nodes) == 0 {
			return nil, fmt.Errorf("link sweep: leaf %d has no node to test from", i)
		}
		if err := checkNames(nodes); err != nil {
			return nil, err
		}
		for _, n := range nodes {
			if j, dup := leafOf[n]; dup {
				return nil, fmt.Errorf("link sweep: node %s is under leaves %d and %d; a node's HCA on a plane has one leaf", n, j, i)
			}
			leafOf[n] = i
		}
	}
	next := make([]int, L) // each leaf's next node to take a turn
	take := func(leaf int) string {
		n := p.Leaves[leaf][next[leaf]%len(p.Leaves[leaf])]
		next[leaf]++
		return n
	}
	out := make([]SteeredTest, 0, 2*L*p.Spines)
	for s := range p.Spines {
		for a := range L {
			for _, hop := range [2]int{1, 2} {
				b := (a + hop) % L
				if b == a { // two leaves: the other one again
					b = (a + 1) % L
				}
				out = append(out, SteeredTest{From: take(a), To: take(b), Spine: s})
			}
		}
	}
	return out, nil
}

// LinkRounds packs steered tests into rounds in which no node takes part
// twice (its HCA on the plane runs one test at a time) and no link is
// crossed twice, so a bandwidth test has its links to itself.
func LinkRounds(p Plane, tests []SteeredTest) [][]SteeredTest {
	leafOf := map[string]int{}
	for i, nodes := range p.Leaves {
		for _, n := range nodes {
			leafOf[n] = i
		}
	}
	type link struct{ leaf, spine int } // spine -1-s: the link down from spine s
	var rounds [][]SteeredTest
	var busyNode []map[string]bool
	var busyLink []map[link]bool
	for _, t := range tests {
		up, down := link{leafOf[t.From], t.Spine}, link{leafOf[t.To], -1 - t.Spine}
		r := 0
		for ; r < len(rounds); r++ {
			if !busyNode[r][t.From] && !busyNode[r][t.To] && !busyLink[r][up] && !busyLink[r][down] {
				break
			}
		}
		if r == len(rounds) {
			rounds = append(rounds, nil)
			busyNode = append(busyNode, map[string]bool{})
			busyLink = append(busyLink, map[link]bool{})
		}
		rounds[r] = append(rounds[r], t)
		busyNode[r][t.From], busyNode[r][t.To] = true, true
		busyLink[r][up], busyLink[r][down] = true, true
	}
	return rounds
}
