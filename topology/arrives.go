package topology

// Arrives reports whether route (AppendRoute's links, from some HCA)
// ends at HCA dst. On a miscabled fabric no up/down path may join two
// HCAs (one cabled to another rail's leaf): the route then stops at the
// switch that has nowhere to send the packets, and they are lost there.
func (t *Topology) Arrives(route []int32, dst int) bool {
	return len(route) > 0 && Link(route[len(route)-1]) == t.hcaLink(dst, false)
}
