package liveplan

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
)

// Link is one steered flow of the link mesh: Src's HCA on Rail probes
// Dst's with flow label Label, all the time. The coordinator chooses the
// flows from the fabric's topology so that every cable between switches
// is crossed both ways by flows of at least two partners (the link
// sweep's plan): a lossy cable then shows in every flow through it, while
// the flows through its siblings stay clean. Without a label every probe
// of an HCA to a peer takes one path (an mlx5 UD address handle without
// one hashes to one UDP source port), and most cables go unprobed.
type Link struct {
	Src   string `json:"src"`
	Dst   string `json:"dst"`
	Rail  int    `json:"rail"`
	Label uint32 `json:"label"` // the IPv6 flow label (20 bits), never 0
}

// SetLinks makes links the plan's steered flows, replacing any it had.
// A flow between nodes the plan lacks, or on a rail an end has no probe
// port on, is refused: the coordinator plans both from one membership.
// It returns the plan's coverage with the flows.
func (pl *Plan) SetLinks(links []Link) (Coverage, error) {
	ls := slices.Clone(links)
	slices.SortFunc(ls, func(a, b Link) int {
		return cmp.Or(cmp.Compare(a.Src, b.Src), cmp.Compare(a.Rail, b.Rail), cmp.Compare(a.Dst, b.Dst), cmp.Compare(a.Label, b.Label))
	})
	ls = slices.Compact(ls)
	for _, l := range ls {
		v := pl.rails[l.Rail]
		switch {
		case l.Label == 0 || l.Label > fabric.FlowLabelMask:
			return Coverage{}, fmt.Errorf("live link flow %s -> %s rail %d: flow label %d is not in 1..%d", l.Src, l.Dst, l.Rail, l.Label, fabric.FlowLabelMask)
		case l.Src == l.Dst:
			return Coverage{}, fmt.Errorf("live link flow %s -> %s rail %d: a node does not probe itself", l.Src, l.Dst, l.Rail)
		case v == nil:
			return Coverage{}, fmt.Errorf("live link flow %s -> %s: no member has rail %d", l.Src, l.Dst, l.Rail)
		}
		for _, n := range []string{l.Src, l.Dst} {
			if _, ok := v.pos[n]; !ok {
				return Coverage{}, fmt.Errorf("live link flow %s -> %s rail %d: %s is not a member with that rail", l.Src, l.Dst, l.Rail, n)
			}
		}
	}
	pl.Links = ls
	pl.indexLinks()
	return pl.coverage(), nil
}

// indexLinks keys the flows by their source HCA for Targets.
func (pl *Plan) indexLinks() {
	pl.linksOf = map[linkKey][]Link{}
	for _, l := range pl.Links {
		k := linkKey{l.Src, l.Rail}
		pl.linksOf[k] = append(pl.linksOf[k], l)
	}
}

type linkKey struct {
	node string
	rail int
}

// linkRate is what each of an HCA's n link flows gets: LinkRate, or an
// even share of what its group probing leaves under the cap when that is
// less. A link flow is never starved to nothing: it is what makes each
// cable's loss visible between sweeps.
func (pl *Plan) linkRate(groupPeers, n int) float64 {
	if n == 0 {
		return 0
	}
	p := pl.Params
	left := p.RatePerHCA - p.GroupRate*float64(groupPeers)
	return max(min(p.LinkRate, left/float64(n)), minLinkRate)
}

// minLinkRate is the least a link flow is probed: one probe a second
// still names a dead cable within a window.
const minLinkRate = 1.0
