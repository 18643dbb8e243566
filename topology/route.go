package topology

// Route appends to buf the directed links a test's packets take from HCA
// src to HCA dst, and reports false when no up/down path joins them.
//
// The path goes up from src's leaf until a switch reaches dst's leaf by
// going down, then down. Where several links are equal (ECMP uplinks,
// parallel cables), RoCE switches pick by a hash of the flow's 5-tuple
// salted per switch, as real switches seed their hashes so that tiers do
// not correlate; flow is the UDP source port, the only field a tester
// varies per QP. InfiniBand switches pick by destination LID, d-mod-k
// (OpenSM's ftree on a fat tree): at tier k the (LID / n^(k-1)) mod n-th
// of n up links; flow is then the LMC offset added to dst's base LID.
//
// Which link a real switch's hash picks is the switch vendor's secret:
// on RoCE this is a model that the simulated fabric obeys and that traced
// paths replace on a real one.
func (t *Topology) Route(buf []Link, src, dst int, flow uint32) ([]Link, bool) {
	return t.route(buf, src, dst, flow, nil)
}

// RouteAround is Route on a fabric whose routing protocol has withdrawn
// the links avoid reports: each switch chooses only among the equal next
// hops that still reach dst's leaf without them, as BGP converges around
// a dead link, so the flows it carried move to its siblings.
func (t *Topology) RouteAround(buf []Link, src, dst int, flow uint32, avoid func(Link) bool) ([]Link, bool) {
	return t.route(buf, src, dst, flow, avoid)
}

// FirstHop is the link src's leaf sends the flow on: Route's second link,
// at a fraction of its cost, for a planner that tries many flows for the
// one that leaves by a given up link. false when the leaf is dst's own
// (no switch link) or no path joins them.
func (t *Topology) FirstHop(src, dst int, flow uint32) (Link, bool) {
	s, target := int(t.leafOf[src]), int(t.leafIndex[t.leafOf[dst]])
	if target < 0 || t.leafIndex[s] < 0 || t.dist[s*len(t.leaves)+target] == 0 {
		return 0, false
	}
	div := uint64(1)
	return t.nextHop(s, target, t.flowKey(src, dst, flow), &div, nil)
}

func (t *Topology) route(buf []Link, src, dst int, flow uint32, avoid func(Link) bool) ([]Link, bool) {
	buf = append(buf, t.hcaLink(src, true))
	s, target := int(t.leafOf[src]), int(t.leafIndex[t.leafOf[dst]])
	if target < 0 || t.leafIndex[s] < 0 {
		return buf, false
	}
	nl := len(t.leaves)
	key := t.flowKey(src, dst, flow)
	div := uint64(1) // d-mod-k: the up ports chosen below divide the LID
	for hops := 0; t.dist[s*nl+target] != 0; hops++ {
		if hops > 2*int(t.maxTier)+2 {
			return buf, false
		}
		l, ok := t.nextHop(s, target, key, &div, avoid)
		if !ok {
			return buf, false
		}
		buf = append(buf, l)
		s = t.linkTo(l)
	}
	return append(buf, t.hcaLink(dst, false)), true
}

// hcaLink is an HCA's cable in the direction away from it (out) or
// towards it.
func (t *Topology) hcaLink(h int, out bool) Link {
	c := int(t.hcaCable[h])
	fromHCA := t.Cables[c].A.IsHCA() && t.Cables[c].A.HCA == h
	return linkOf(c, fromHCA == out)
}

// flowKey is what path choice hashes (RoCE) or divides (IB).
func (t *Topology) flowKey(src, dst int, flow uint32) uint64 {
	if t.LinkLayer == InfiniBand {
		lid := uint64(t.HCAs[dst].LID)
		if lid == 0 {
			lid = uint64(dst) + 1
		}
		return lid + uint64(flow)
	}
	return mix(mix(uint64(src)<<32|uint64(dst)) ^ uint64(flow)<<16 ^ 4791)
}

// candidates appends the equal next links from switch s towards leaf
// index target: down links one hop nearer when s reaches it going down,
// else the up links whose switch reaches it (any up link when none does
// yet: a leaf of another pod). up says which.
func (t *Topology) candidates(buf []Link, s, target int) (c []Link, up bool) {
	nl := len(t.leaves)
	if d := t.dist[s*nl+target]; d > 0 {
		for _, l := range t.down[s] {
			if t.dist[t.linkTo(l)*nl+target] == d-1 {
				buf = append(buf, l)
			}
		}
		return buf, false
	}
	for _, l := range t.up[s] {
		if t.dist[t.linkTo(l)*nl+target] >= 0 {
			buf = append(buf, l)
		}
	}
	if len(buf) == 0 {
		buf = append(buf, t.up[s]...)
	}
	return buf, true
}

func (t *Topology) nextHop(s, target int, key uint64, div *uint64, avoid func(Link) bool) (Link, bool) {
	var cand [64]Link
	c, up := t.candidates(cand[:0], s, target)
	if avoid != nil {
		c = t.viable(c, target, avoid, 0)
	}
	n := uint64(len(c))
	switch {
	case n == 0:
		return 0, false
	case t.LinkLayer == InfiniBand && up:
		// d-mod-k: the destination picks the up port, tier by tier,
		// each tier by the LID divided by the up ports of the tiers
		// below, so every up port of every tier carries destinations.
		l := c[(key / *div)%n]
		*div *= n
		return l, true
	case n == 1:
		return c[0], true
	case t.LinkLayer == InfiniBand:
		return c[key%n], true
	}
	return c[mix(key^uint64(s)*0x9e3779b97f4a7c15)%n], true
}

// viable keeps the links of c that are not withdrawn and lead on to
// target's leaf without a withdrawn link.
func (t *Topology) viable(c []Link, target int, avoid func(Link) bool, depth int) []Link {
	out := c[:0]
	for _, l := range c {
		if !avoid(l) && t.reachesAround(t.linkTo(l), target, avoid, depth+1) {
			out = append(out, l)
		}
	}
	return out
}

func (t *Topology) reachesAround(s, target int, avoid func(Link) bool, depth int) bool {
	if t.dist[s*len(t.leaves)+target] == 0 {
		return true
	}
	if depth > 2*int(t.maxTier)+2 {
		return false
	}
	var cand [64]Link
	c, _ := t.candidates(cand[:0], s, target)
	return len(t.viable(c, target, avoid, depth)) > 0
}

// mix is splitmix64's finalizer: cheap, and every input bit moves every
// output bit, as a switch's hash over the 5-tuple should.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Switches appends the switches a route crosses, in order.
func (t *Topology) SwitchesOn(buf []int, path []Link) []int {
	for _, l := range path[:max(len(path)-1, 0)] {
		e := t.LinkTo(l)
		if !e.IsHCA() {
			buf = append(buf, e.Switch)
		}
	}
	return buf
}

// Spread adds, for traffic from leaf srcLeaf to leaf dstLeaf (switch
// indices) spread over the equal paths as ECMP spreads many flows, each
// switch-to-switch link's share of it. It is what a link's count of tests
// through it is expected to be when the flows of the tests are not read
// one by one. InfiniBand routes by destination, not evenly: use Route.
func (t *Topology) Spread(srcLeaf, dstLeaf int, share float64, add func(l Link, share float64)) {
	li := t.leafIndex[dstLeaf]
	if li < 0 || srcLeaf == dstLeaf {
		return
	}
	t.spread(srcLeaf, int(li), share, add, 0)
}

func (t *Topology) spread(s, target int, share float64, add func(Link, float64), depth int) {
	if t.dist[s*len(t.leaves)+target] == 0 || depth > 2*int(t.maxTier)+2 {
		return
	}
	var cand [64]Link
	c, _ := t.candidates(cand[:0], s, target)
	if len(c) == 0 {
		return
	}
	each := share / float64(len(c))
	for _, l := range c {
		add(l, each)
		t.spread(t.linkTo(l), target, each, add, depth+1)
	}
}
