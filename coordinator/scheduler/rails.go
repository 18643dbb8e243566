package scheduler

import "fmt"

// RailMode says which HCA of node A meets which HCA of node B.
type RailMode string

const (
	// RailsSame tests rail i of A against rail i of B: the path a
	// rail-optimized fabric gives NCCL's same-rail traffic. The default.
	RailsSame RailMode = "same"
	// RailsCross tests rail i against rail j for every i != j: the paths
	// that cross the spine (or PXN fallbacks) when rails are cabled apart.
	RailsCross RailMode = "cross"
	// RailsAll is same and cross together: every HCA pair of two nodes.
	RailsAll RailMode = "all"
)

// ParseRailMode reads a sweep spec's rail mode; "" means same.
func ParseRailMode(s string) (RailMode, error) {
	switch m := RailMode(s); m {
	case "":
		return RailsSame, nil
	case RailsSame, RailsCross, RailsAll:
		return m, nil
	}
	return "", fmt.Errorf("rail mode %q: want same, cross or all", s)
}

// RailLink joins rail A of a pair's first node to rail B of its second.
type RailLink struct {
	A int `json:"a"`
	B int `json:"b"`
}

// RailPlan lists the rail links of one pair as phases. Inside a phase every
// rail of either node appears once, so a phase's links run in parallel like
// the same-rail case does; phases run one after another. Phase s links rail
// i to rail (i+s) mod rails (a Latin square), so over all phases every
// (i, j) combination the mode asks for appears exactly once:
//
//	same:  1 phase,         rails links
//	cross: rails-1 phases,  rails*(rails-1) links
//	all:   rails phases,    rails*rails links
func RailPlan(mode RailMode, rails int) ([][]RailLink, error) {
	if rails < 1 {
		return nil, fmt.Errorf("rails %d: want at least 1", rails)
	}
	first, last := 0, rails-1
	switch mode {
	case RailsSame, "":
		last = 0
	case RailsCross:
		first = 1
	case RailsAll:
	default:
		return nil, fmt.Errorf("rail mode %q: want same, cross or all", mode)
	}
	var phases [][]RailLink
	for s := first; s <= last; s++ {
		phase := make([]RailLink, rails)
		for i := range phase {
			phase[i] = RailLink{A: i, B: (i + s) % rails}
		}
		phases = append(phases, phase)
	}
	return phases, nil
}
