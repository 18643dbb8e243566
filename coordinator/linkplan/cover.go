package linkplan

import (
	"cmp"
	"slices"

	"github.com/rdmamesh/rdmamesh/topology"
)

// PlaneCover is how well one rail's tests cover its switch links, by
// the model (a plan) or by the paths the tests took (Cover).
type PlaneCover struct {
	Rail  int `json:"rail"`
	Links int `json:"links"` // switch-to-switch link directions of the plane
	// Covered have Need tests with different partners through them.
	Covered int `json:"covered"`
	Tests   int `json:"tests"` // directional tests on the rail
	// MinTests and MaxTests are the fewest and most tests through one of
	// the plane's link directions.
	MinTests  int         `json:"min_tests"`
	MaxTests  int         `json:"max_tests"`
	Uncovered []Uncovered `json:"uncovered,omitempty"`
}

// Uncovered is a link direction with fewer than Need tests, and why.
type Uncovered struct {
	Link  string `json:"link"`
	Tests int    `json:"tests"`
	Why   string `json:"why"`
}

func (p *plane) cover() PlaneCover {
	pc := PlaneCover{Rail: p.rail, Links: len(p.links), Tests: 2 * p.tests, MinTests: -1}
	for _, l := range p.links {
		n := int(p.count[l])
		if pc.MinTests < 0 || n < pc.MinTests {
			pc.MinTests = n
		}
		pc.MaxTests = max(pc.MaxTests, n)
		if p.need[l] <= 0 {
			pc.Covered++
			continue
		}
		why := p.why[l]
		if why == "" {
			why = "covered on another rail's plan only in part"
		}
		pc.Uncovered = append(pc.Uncovered, Uncovered{Link: p.t.LinkName(l), Tests: n, Why: why})
	}
	pc.MinTests = max(pc.MinTests, 0)
	return pc
}

// Taken is one test as it ran: its ends and the switch links its packets
// crossed (a traced path, or the model's route of its flow).
type Taken struct {
	Src, Dst int // HCAs of the topology
	Links    []topology.Link
}

// Cover counts what tests crossed each switch link of the rails' planes
// and names the link directions left with fewer than Need tests with
// different partners. why says why a link missed its tests, when a
// caller knows more than "no test crossed it" (a test that failed
// before its path was known).
func Cover(t *topology.Topology, rails []int, taken map[int][]Taken) []PlaneCover {
	out := make([]PlaneCover, 0, len(rails))
	for _, r := range rails {
		var hcas []int
		for h, x := range t.HCAs {
			if x.Rail == r && t.LeafOf(h) >= 0 {
				hcas = append(hcas, h)
			}
		}
		p := newPlane(t, r, hcas, make([]int8, 2*len(t.Cables)), make([]int64, 2*len(t.Cables)))
		for _, tk := range taken[r] {
			p.record(tk.Src, tk.Dst, tk.Links)
			p.tests++
		}
		for _, l := range p.links {
			if p.need[l] > 0 {
				p.why[l] = whyShort(int(p.count[l]))
			}
		}
		pc := p.cover()
		pc.Tests = len(taken[r])
		out = append(out, pc)
	}
	slices.SortFunc(out, func(a, b PlaneCover) int { return cmp.Compare(a.Rail, b.Rail) })
	return out
}

func whyShort(n int) string {
	switch n {
	case 0:
		return "no test's path crossed it"
	case 1:
		return "one test's path crossed it"
	}
	return "the tests that crossed it all ran between the same two HCAs"
}
