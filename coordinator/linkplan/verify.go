package linkplan

import "github.com/rdmamesh/rdmamesh/topology"

// Candidates are the flow labels a test planned with label may take
// instead, label first: what a sweep traces before its rounds, because
// the fabric's real hash may send label elsewhere. They are the same on
// every leader, so a committed trace says which one was chosen.
func Candidates(label uint32, n int) []uint32 {
	out := make([]uint32, 0, n)
	for j := range n {
		// A stride coprime with 0x3fff walks every label before repeating.
		out = append(out, (label-1+uint32(j)*0x9e5)%0x3fff+1)
	}
	return out
}

// Ends are the first and last switch links of a path from one HCA to
// another (the leaves' up and down cables): what a steered test is meant
// to cross, and what a trace must show for it to count.
func Ends(path []topology.Link) (first, last topology.Link, ok bool) {
	if len(path) < 4 {
		return 0, 0, false
	}
	return path[1], path[len(path)-2], true
}

// Intended is the leaf cables the plan meant a test from src to dst with
// label to cross, by the topology's model.
func Intended(t *topology.Topology, src, dst int, label uint32) (first, last topology.Link, ok bool) {
	route, ok := t.Route(nil, src, dst, uint32(Sport(label)))
	if !ok {
		return 0, 0, false
	}
	return Ends(route)
}

// LabelOf is the label whose UDP source port is sport among cands; false
// when none is.
func LabelOf(sport int, cands []uint32) (uint32, bool) {
	for _, c := range cands {
		if int(Sport(c)) == sport {
			return c, true
		}
	}
	return 0, false
}
