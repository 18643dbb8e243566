package matrix

import "github.com/rdmamesh/rdmamesh/topology"

// linkShare is the part of the traffic from one leaf to another that the
// equal paths carry over a cable: ab from its end A to end B, ba back.
// Between 0 and 1 a test's own flow decides whether its path is one of
// them.
type linkShare struct{ ab, ba float64 }

func (s linkShare) total() float64 { return s.ab + s.ba }

// shareEps absorbs the rounding of Spread's shares: a share this close to
// 1 is every equal path.
const shareEps = 1e-9

// leafPairShares finds the leaf pairs (leaf indices, from → to) some of
// whose equal paths cross switch-to-switch cable c, with their shares. A
// path goes up, then down, so it crosses c going up only from a leaf
// below c's lower switch and going down only to one: only pairs with an
// end there are spread, not every pair of the fabric.
func leafPairShares(t *topology.Topology, c int) map[[2]int32]linkShare {
	cb := t.Cables[c]
	a, b := cb.A.Switch, cb.B.Switch
	if t.Switches[a].Tier == t.Switches[b].Tier {
		return nil // a cable within a tier carries no up/down route
	}
	lower := a
	if t.Switches[b].Tier < t.Switches[a].Tier {
		lower = b
	}
	plane := t.Switches[lower].Plane
	onPlane := func(li int) bool {
		p := t.Switches[t.LeafSwitch(li)].Plane
		return plane < 0 || p < 0 || p == plane
	}
	fwd := topology.Link(2 * c)
	out := map[[2]int32]linkShare{}
	spread := func(x, y int) {
		var sh linkShare
		t.Spread(t.LeafSwitch(x), t.LeafSwitch(y), 1, func(l topology.Link, share float64) {
			switch l {
			case fwd:
				sh.ab += share
			case fwd.Reverse():
				sh.ba += share
			}
		})
		if sh.total() > shareEps {
			out[[2]int32{int32(x), int32(y)}] = sh
		}
	}
	for x := range t.Leaves() {
		if !onPlane(x) {
			continue
		}
		for y := range t.Leaves() {
			if x != y && onPlane(y) && (t.Reaches(lower, x) || t.Reaches(lower, y)) {
				spread(x, y)
			}
		}
	}
	return out
}
