package cabling

// readPaths takes from each traced path the switch its source is cabled
// to (the first hop) and its destination's (the last): a traceroute's
// first answer comes from the source's leaf, its last switch answer
// from the destination's. A silent end hop says nothing; a hop the plan
// does not name is left out, as it may be a router outside the fabric.
func (c *checker) readPaths(paths []Path) {
	for _, p := range paths {
		if len(p.Hops) == 0 {
			continue
		}
		if h, ok := c.t.HCA(p.SrcNode, p.SrcRail); ok && p.Hops[0] != "" {
			c.vote(int32(h), p.Hops[0])
		}
		if h, ok := c.t.HCA(p.DstNode, p.DstRail); ok && p.Hops[len(p.Hops)-1] != "" {
			c.vote(int32(h), p.Hops[len(p.Hops)-1])
		}
	}
}

func (c *checker) vote(h int32, hop string) {
	sw := c.names.find(hop, "")
	if sw < 0 {
		return
	}
	v := &c.items[h].path
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
