package linkplan

import (
	"cmp"
	"fmt"
	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"slices"

	"github.com/rdmamesh/rdmamesh/topology"
)

// plane plans the tests of one rail: its HCAs, the leaves they hang off
// and the switch links above those leaves.
type plane struct {
	t      *topology.Topology
	rail   int
	ib     bool
	leaves []int         // leaf positions with an HCA of the plane, in order
	byLeaf map[int][]int // leaf position -> its HCAs, by node name
	turn   map[int]int   // leaf position -> how many tests its HCAs took
	links  []topology.Link
	below  map[int][]int // switch -> positions in leaves below it
	need   []int8        // per link (shared by the rails): tests still wanted
	first  []int64       // per link: the first test's ends, +1; 0: none yet
	count  []int32       // per link: the plan's tests through it
	label  uint32        // the next flow label to try
	tests  int
	why    map[topology.Link]string
	ringIn map[topology.Link]bool // down cables a ring test has come down
	pairs  *pairSet               // the rail's tests
	route  []topology.Link
}

func newPlane(t *topology.Topology, rail int, hcas []int, need []int8, first []int64) *plane {
	p := &plane{t: t, rail: rail, ib: t.LinkLayer == topology.InfiniBand, byLeaf: map[int][]int{}, turn: map[int]int{},
		below: map[int][]int{}, need: need, first: first, count: make([]int32, len(need)), label: 1,
		why: map[topology.Link]string{}, ringIn: map[topology.Link]bool{}}
	slices.SortFunc(hcas, func(a, b int) int { return cmp.Compare(t.HCAs[a].Node, t.HCAs[b].Node) })
	for _, h := range hcas {
		leaf := t.LeafIndex(t.LeafOf(h))
		if _, ok := p.byLeaf[leaf]; !ok {
			p.leaves = append(p.leaves, leaf)
		}
		p.byLeaf[leaf] = append(p.byLeaf[leaf], h)
	}
	slices.Sort(p.leaves)
	// The plane's links: every up link from its leaves and from the
	// switches above them, and each one's way back down.
	seen := map[int]bool{}
	queue := make([]int, 0, len(p.leaves))
	for _, leaf := range p.leaves {
		queue = append(queue, t.LeafSwitch(leaf))
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if seen[s] {
			continue
		}
		seen[s] = true
		for _, l := range t.Uplinks(s) {
			p.links = append(p.links, l, l.Reverse())
			queue = append(queue, t.LinkTo(l).Switch)
		}
	}
	slices.SortFunc(p.links, p.order)
	p.links = slices.Compact(p.links)
	for _, l := range p.links {
		if p.first[l] == 0 && p.need[l] == 0 {
			p.need[l] = Need // a link shared with a rail planned before keeps what that one left
		}
	}
	return p
}

// order takes up links before down links, lower tiers first: the up
// links from the leaves shape the tests, which then fill the down links
// on their way.
func (p *plane) order(a, b topology.Link) int {
	ua, ub := p.isUp(a), p.isUp(b)
	if ua != ub {
		if ua {
			return -1
		}
		return 1
	}
	ta, tb := p.t.Switches[p.lower(a)].Tier, p.t.Switches[p.lower(b)].Tier
	return cmp.Or(cmp.Compare(ta, tb), cmp.Compare(a, b))
}

func (p *plane) isUp(l topology.Link) bool {
	return p.t.Switches[p.t.LinkFrom(l).Switch].Tier < p.t.Switches[p.t.LinkTo(l).Switch].Tier
}

// lower is the switch at the link's lower end.
func (p *plane) lower(l topology.Link) int {
	if p.isUp(l) {
		return p.t.LinkFrom(l).Switch
	}
	return p.t.LinkTo(l).Switch
}

// leavesBelow are the plane's leaves switch s reaches going down.
func (p *plane) leavesBelow(s int) []int {
	if b, ok := p.below[s]; ok {
		return b
	}
	var b []int
	for _, leaf := range p.leaves {
		if p.t.Reaches(s, leaf) {
			b = append(b, leaf)
		}
	}
	p.below[s] = b
	return b
}

// plan adds tests until every link of the plane has its Need, or no test
// the search can find crosses it.
func (p *plane) plan(pairs *pairSet) {
	p.ring(pairs)
	for _, l := range p.links {
		for p.need[l] > 0 {
			if !p.testThrough(l, pairs) {
				break
			}
		}
	}
}

// ring lays the tests out as a ring of leaves: over each of its up
// links, every leaf tests its next leaf, and the test comes back over the
// same cables. A leaf's up links then carry its own tests out and its
// previous leaf's back, its down links the previous leaf's tests in and
// its own back: each link direction twice, with other partners, in two
// tests per cable above the leaves, the fewest there can be. The next
// leaf is the same leaf of the next pod in a three-tier plane, so the
// tests cross the cores too; elsewhere the leaf after it.
func (p *plane) ring(pairs *pairSet) {
	if len(p.leaves) < 2 {
		return
	}
	step := p.podSize()
	for i, leaf := range p.leaves {
		next := p.leaves[(i+step)%len(p.leaves)]
		for _, u := range p.t.Uplinks(p.t.LeafSwitch(leaf)) {
			if p.need[u] > 0 {
				p.search(u, leaf, []int{next}, 0, pairs, ringEffort)
			}
		}
	}
}

// podSize is how many of the plane's leaves each pod has when the pods
// have equally many and there are several; 1 otherwise.
func (p *plane) podSize() int {
	per := map[int]int{}
	for _, leaf := range p.leaves {
		per[p.t.Switches[p.t.LeafSwitch(leaf)].Pod]++
	}
	size := 0
	for _, n := range per {
		if size != 0 && n != size {
			return 1
		}
		size = n
	}
	if len(per) < 2 {
		return 1
	}
	return size
}

// testThrough adds the best test it finds that crosses l, and reports
// whether it found one.
func (p *plane) testThrough(l topology.Link, pairs *pairSet) bool {
	x := p.lower(l)
	in := p.leavesBelow(x)
	out := make([]int, 0, len(p.leaves)-len(in))
	for _, leaf := range p.leaves {
		if _, found := slices.BinarySearch(in, leaf); !found {
			out = append(out, leaf)
		}
	}
	switch {
	case len(in) == 0:
		p.why[l] = fmt.Sprintf("no worker's rail-%d HCA is below %s", p.rail, p.t.Switches[x].Name)
		return false
	case len(out) == 0:
		p.why[l] = fmt.Sprintf("every worker's rail-%d HCA is below %s: no test between them leaves it", p.rail, p.t.Switches[x].Name)
		return false
	}
	srcs, dsts := in, out
	if !p.isUp(l) {
		srcs, dsts = out, in
	}
	// Source leaves take turns; the destinations start past the source's
	// leaf, so that its tests go to its nearest leaves first.
	srcLeaf := srcs[p.tests%len(srcs)]
	start, _ := slices.BinarySearch(dsts, srcLeaf+1)
	if !p.search(l, srcLeaf, dsts, start, pairs, fillEffort) {
		p.why[l] = fmt.Sprintf("none of %d tests tried between the workers crossed it (the fabric's hash never picked it)", fillEffort.tries)
		return false
	}
	return true
}

// search adds the best test it finds from srcLeaf's HCA whose turn it is
// to an HCA of dsts (from start on) that crosses l.
func (p *plane) search(l topology.Link, srcLeaf int, dsts []int, start int, pairs *pairSet, e effort) bool {
	best := candidate{score: -1}
	hits := 0
	srcK := 0
	src := p.pick(srcLeaf, srcK)
	leafUp := p.isUp(l) && p.t.LinkFrom(l).Switch == p.t.LeafSwitch(srcLeaf)
	for try := 0; try < e.tries && hits < e.hits; try++ {
		dst := p.dstAt(dsts, start, try)
		// A pair tested already on this rail: the source's next HCA takes
		// over (a small leaf runs out of new partners otherwise).
		for k := 0; k < len(p.byLeaf[srcLeaf]) && pairs.has(p.t.HCAs[src].Node, p.t.HCAs[dst].Node, p.rail); k++ {
			srcK++
			src = p.pick(srcLeaf, srcK)
		}
		if pairs.has(p.t.HCAs[src].Node, p.t.HCAs[dst].Node, p.rail) {
			continue
		}
		label := p.nextLabel()
		if leafUp && !p.leavesBy(src, dst, label, l) {
			continue // most tries: a leaf's flows spread over all its up links
		}
		route := p.routeOf(src, dst, label)
		if !slices.Contains(route, l) {
			continue
		}
		hits++
		c := candidate{src: src, dst: dst, label: label, score: 2 * p.score(route, src, dst), ends: p.endsWanted(route, src, dst)}
		if e.ring && p.ringIn[route[len(route)-1]] {
			c.ends = false // another of the ring's tests comes down that cable
		}
		full := c.score == 2*len(route)
		if e.ring && best.score >= 0 && (!c.ends || best.good && c.score <= best.score) {
			// The ring's way back is only worth looking for over wanted
			// leaf cables, and for a way out better than the best so far.
			continue
		}
		mirror := reversed(route)
		c.back, c.backScore, c.backMirrors = p.steerBack(dst, src, mirror, e.back)
		// Out and back over leaf cables that still want tests is the
		// ring's layout, taken over any score; best when every link
		// between them (a three-tier plane's cores) wants one too.
		good := c.ends && c.backMirrors
		switch {
		case good && (!best.good || c.total() > best.total()):
			c.good = true
			best = c
		case !best.good && c.total() > best.total():
			best = c
		}
		if good && full {
			break
		}
	}
	if best.score < 0 {
		return false
	}
	out := p.routeOf(best.src, best.dst, best.label)
	if e.ring {
		p.ringIn[out[len(out)-1]] = true
	}
	p.record(best.src, best.dst, out)
	p.record(best.dst, best.src, p.routeOf(best.dst, best.src, best.back))
	pairs.add(p.t.HCAs[best.src].Node, p.t.HCAs[best.dst].Node, scheduler.RailFlow{Rail: p.rail, A: best.label, B: best.back})
	p.turn[p.t.LeafIndex(p.t.LeafOf(best.src))]++
	p.turn[p.t.LeafIndex(p.t.LeafOf(best.dst))]++
	p.tests++
	return true
}

// candidate is a test the search found: its forward label and score,
// and the best label found for its reverse direction. Scores count the
// links still wanting a test twice, plus one for a reverse that comes
// back over the forward path's own cables: on a two-tier plane that is
// the layout that covers every link direction exactly twice.
type candidate struct {
	src, dst          int
	label, back       uint32
	score, backScore  int
	ends, backMirrors bool // the way out's leaf cables still want tests; so do the way back's, which mirrors it
	good              bool // both
}

func (c candidate) total() int { return c.score + c.backScore }

func reversed(route []topology.Link) []topology.Link {
	out := make([]topology.Link, len(route))
	for i, l := range route {
		out[len(route)-1-i] = l.Reverse()
	}
	return out
}

// dstAt is the destination of a search's try: the leaves take turns
// from start, so that the best of a search's hits can be a test to any
// of the nearest leaves, and each visit to a leaf takes its next HCA (on
// InfiniBand another LID, another path; on RoCE the flow label changes
// every try anyway).
func (p *plane) dstAt(dsts []int, start, try int) int {
	leaf := dsts[(start+try)%len(dsts)]
	return p.pick(leaf, try/len(dsts))
}

// pick is the HCA of leaf whose turn it is, or the k-th after it.
func (p *plane) pick(leaf, k int) int {
	h := p.byLeaf[leaf]
	return h[(p.turn[leaf]+k)%len(h)]
}

// nextLabel is the next flow label to try on RoCE, cycling through the
// labels whose UDP source port is 0xC000 plus the label; InfiniBand
// steers by destination, and its QPs send without one.
func (p *plane) nextLabel() uint32 {
	if p.ib {
		return 0
	}
	l := p.label
	p.label = p.label%0x3fff + 1
	return l
}

// leavesBy reports whether the test leaves its source's leaf by link l.
func (p *plane) leavesBy(src, dst int, label uint32, l topology.Link) bool {
	flow := uint32(0)
	if !p.ib {
		flow = uint32(Sport(label))
	}
	first, ok := p.t.FirstHop(src, dst, flow)
	return ok && first == l
}

// routeOf is the switch links a test's packets take by the model.
func (p *plane) routeOf(src, dst int, label uint32) []topology.Link {
	flow := uint32(0)
	if !p.ib {
		flow = uint32(Sport(label))
	}
	p.route, _ = p.t.Route(p.route[:0], src, dst, flow)
	if len(p.route) >= 2 {
		return p.route[1 : len(p.route)-1] // the HCAs' own cables are not this plan's
	}
	return nil
}

// score is how many links on route still want a test from these ends.
func (p *plane) score(route []topology.Link, src, dst int) int {
	n := 0
	key := int64(src)<<32 | int64(dst) + 1
	for _, l := range route {
		if p.need[l] > 0 && p.first[l] != key {
			n++
		}
	}
	return n
}

// steerBack picks the label of the reverse test (src → dst, the pair's
// second direction) that crosses the most links still wanting a test,
// preferring the path that mirrors the forward one (mirrors); it returns
// the label, its score and whether it mirrors the way out over leaf
// cables that still want tests.
func (p *plane) steerBack(src, dst int, mirror []topology.Link, tries int) (uint32, int, bool) {
	if p.ib {
		route := p.routeOf(src, dst, 0)
		return 0, 2 * p.score(route, src, dst), mirrors(route, mirror) && p.endsWanted(route, src, dst)
	}
	best, bestScore := uint32(0), -1
	for try := 0; try < tries; try++ {
		label := p.nextLabel()
		if try > 0 && len(mirror) > 0 && !p.leavesBy(src, dst, label, mirror[0]) {
			continue // no mirror; the first try stands for the rest
		}
		route := p.routeOf(src, dst, label)
		s := 2 * p.score(route, src, dst)
		m := mirrors(route, mirror)
		if m {
			s++
		}
		if s > bestScore {
			best, bestScore = label, s
		}
		if m && p.endsWanted(route, src, dst) {
			return label, s, true
		}
	}
	return best, bestScore, false
}

// endsWanted reports whether the first and last switch links of route,
// the leaves' cables, still want a test from these ends.
func (p *plane) endsWanted(route []topology.Link, src, dst int) bool {
	n := len(route)
	return n > 0 && p.wants(route[0], src, dst) && p.wants(route[n-1], src, dst)
}

func (p *plane) wants(l topology.Link, src, dst int) bool {
	return p.need[l] > 0 && p.first[l] != int64(src)<<32|int64(dst)+1
}

// mirrors reports whether route leaves and reaches the leaves over the
// cables mirror does: the leaf level is what the ring's layout needs, and
// between the pods any core will do.
func mirrors(route, mirror []topology.Link) bool {
	n := len(route)
	return n > 0 && n == len(mirror) && route[0] == mirror[0] && route[n-1] == mirror[n-1]
}

func (p *plane) record(src, dst int, route []topology.Link) {
	key := int64(src)<<32 | int64(dst) + 1
	for _, l := range route {
		p.count[l]++
		switch {
		case p.need[l] <= 0:
		case p.first[l] == 0:
			p.first[l] = key
			p.need[l]--
		case p.first[l] != key:
			p.need[l]--
		}
	}
}
