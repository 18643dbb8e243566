package cabling

// readPaths takes from each traced path the switch its source is cabled
// to (the first hop) and its destination's (the last): a traceroute's
// first answer comes from the source's leaf, its last switch answer
// from the destination's. A silent end hop says nothing; a hop the plan
// does not name is left out, as it may be a router outside the fabric.
//
// Two switches a path names one after the other are cabled together:
// when the plan has one cable between them, that cable is seen (not its
// ports); when it has none, the path crossed a cable the plan lacks.
func (c *checker) readPaths(paths []Path) {
	between := c.cablesBetween()
	unplanned := map[[2]int32]bool{}
	for _, p := range paths {
		if len(p.Hops) == 0 {
			continue
		}
		for k := 1; k < len(p.Hops); k++ {
			if p.Hops[k-1] == "" || p.Hops[k] == "" {
				continue
			}
			a, b := c.names.find(p.Hops[k-1], ""), c.names.find(p.Hops[k], "")
			if a < 0 || b < 0 || a == b {
				continue
			}
			switch items := between[[2]int32{min(a, b), max(a, b)}]; len(items) {
			case 0:
				if !unplanned[[2]int32{min(a, b), max(a, b)}] {
					unplanned[[2]int32{min(a, b), max(a, b)}] = true
					c.unplannedHop(a, b, p)
				}
			case 1:
				it := &c.items[items[0]]
				c.voteFor(it, it.expected.sw)
			}
		}
		if h, ok := c.t.HCA(p.SrcNode, p.SrcRail); ok && p.Hops[0] != "" {
			c.vote(int32(h), p.Hops[0])
		}
		if h, ok := c.t.HCA(p.DstNode, p.DstRail); ok && p.Hops[len(p.Hops)-1] != "" {
			c.vote(int32(h), p.Hops[len(p.Hops)-1])
		}
	}
}

// cablesBetween is the plan's switch cables by the pair of switches they
// join (the lower index first).
func (c *checker) cablesBetween() map[[2]int32][]int32 {
	out := map[[2]int32][]int32{}
	for i := len(c.t.HCAs); i < len(c.items); i++ {
		a, b := c.items[i].anchor.sw, c.items[i].expected.sw
		k := [2]int32{min(a, b), max(a, b)}
		out[k] = append(out[k], int32(i))
	}
	return out
}

// unplannedHop reports a cable a traced path crossed that the plan lacks.
func (c *checker) unplannedHop(a, b int32, p Path) {
	an, bn := c.t.Switches[a].Name, c.t.Switches[b].Name
	c.extra = append(c.extra, Finding{Verdict: Unexpected, End: an, Found: bn, Rail: c.t.Switches[a].Plane, Evidence: EvidencePath,
		Detail: "a traced path (" + p.SrcNode + " -> " + p.DstNode + ") went from " + an + " straight to " + bn + "; the plan has no cable between them",
		Action: "find the cable between " + an + " and " + bn + " and take it out, or add it to the plan"})
}

func (c *checker) vote(h int32, hop string) {
	sw := c.names.find(hop, "")
	if sw < 0 {
		return
	}
	c.voteFor(&c.items[h], sw)
}

func (c *checker) voteFor(it *item, sw int32) {
	v := &it.path
	switch {
	case v.agree == 0 && v.other == 0:
		v.sw, v.agree = sw, 1
	case v.sw == sw:
		v.agree++
	default:
		v.other++
	}
}

// pathSight is the path evidence as a sight: only a switch all of an
// HCA's paths agree on counts, since one HCA has one cable.
func (v pathVote) sight() (sight, bool) {
	if v.agree == 0 || v.other > 0 {
		return sight{}, false
	}
	return sight{seen: true, at: swPort{v.sw, 0}, ev: EvidencePath}, true
}
