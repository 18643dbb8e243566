package matrix

import (
	"fmt"
	"math"
	"sort"

	"github.com/rdmamesh/rdmamesh/topology"
)

// Traced holds the measured paths of a sweep's flows on its topology.
// Route's ECMP is a model: no switch vendor publishes its hash, so on a
// real RoCE fabric the link scan routes the cells that cross leaves over
// these paths alone, and a cell without one is left out rather than
// placed on a link it may never have touched. InfiniBand's routes are the
// subnet manager's tables, and a cell within a leaf has one path: both
// keep the model.
type Traced struct {
	paths map[tracedKey][]topology.Link
	loss  map[tracedKey][]HopLoss // hoploss.go
}

type tracedKey struct {
	src, dst string
	rail     int
	back     bool
}

// Add records the links of the flow of cell src → dst on rail: its data
// path, or with back its responder's (dst → src). links runs from the
// flow's source HCA's cable to its destination's, as
// topology.PathFromHops gives it.
func (tr *Traced) Add(src, dst string, rail int, back bool, links []topology.Link) {
	if len(links) < 2 {
		return
	}
	if tr.paths == nil {
		tr.paths = map[tracedKey][]topology.Link{}
	}
	tr.paths[tracedKey{src, dst, rail, back}] = links
}

// Len is the number of traced flows.
func (tr *Traced) Len() int {
	if tr == nil {
		return 0
	}
	return len(tr.paths)
}

// measured reports whether cross-leaf cells route over traced paths only.
func (ls *linkScan) measured() bool {
	return ls.tr != nil && ls.t.LinkLayer == topology.RoCE
}

// route appends the links of cell a → b's flow (back: its responder's),
// HCAs ha and hb: the traced path where paths are measured and the cell
// crosses leaves, else the model's. ok is false when the path is unknown.
func (ls *linkScan) route(buf []topology.Link, a, b, rail int, ha, hb int32, back bool, flow uint16) ([]topology.Link, bool) {
	from, to := ha, hb
	if back {
		from, to = hb, ha
	}
	if ls.measured() && ls.t.LeafOf(int(ha)) != ls.t.LeafOf(int(hb)) {
		ns := ls.l.m.Nodes
		p, ok := ls.tr.paths[tracedKey{ns[a].Name, ns[b].Name, rail, back}]
		if !ok {
			return buf, false
		}
		return append(buf, p...), true
	}
	return ls.t.Route(buf, int(from), int(to), uint32(flow))
}

// expectTraced counts, where paths are measured, the tests through each
// link above the leaves from the traced flows of tested cells: exactly,
// where the model's spread would be a guess.
func (ls *linkScan) expectTraced(addLink func(lk topology.Link, share float64, dst int)) {
	t := ls.t
	for k, p := range ls.tr.paths {
		if _, ok := ls.tracedCell(k); !ok {
			continue
		}
		dst := t.LinkFrom(p[len(p)-1]).Switch
		for _, lk := range p[1 : len(p)-1] {
			addLink(lk, 1, dst)
		}
	}
}

// WarnLinkUnused: a link between switches that no traced flow crossed,
// although enough flows could have taken it that missing them all by
// chance is unlikely. ECMP routes around a link that is down or whose
// routes were withdrawn, so every test passes while the fabric runs on
// fewer paths than it was built with.
const WarnLinkUnused = "link-unused"

// unusedMaxChance: a link is reported unused when the traced flows would
// all have missed it with at most this chance, were it up.
const unusedMaxChance = 0.005

// unusedLinks finds the links above the leaves that the traced flows
// avoided: each flow from leaf x to leaf y could take any of the equal
// paths between them (topology.Spread gives each link's share), so a link
// up and in the hash misses a flow with chance 1 - share.
func unusedLinks(t *topology.Topology, tr *Traced) []Warning {
	if t == nil || tr.Len() == 0 || t.LinkLayer != topology.RoCE {
		return nil
	}
	miss := map[topology.Link]float64{} // log of the chance to miss every flow
	flows := map[topology.Link]int{}
	used := map[topology.Link]bool{}
	for _, p := range tr.paths {
		from, to := t.LinkTo(p[0]).Switch, t.LinkFrom(p[len(p)-1]).Switch
		if from < 0 || to < 0 || from == to {
			continue
		}
		for _, lk := range p[1 : len(p)-1] {
			used[lk] = true
		}
		t.Spread(from, to, 1, func(lk topology.Link, share float64) {
			miss[lk] += math.Log1p(-min(share, 1-1e-9))
			flows[lk]++
		})
	}
	flagged := map[topology.Link]bool{}
	for lk, lm := range miss {
		if !used[lk] && math.Exp(lm) <= unusedMaxChance {
			flagged[lk] = true
		}
	}
	var out []Warning
	for lk := range flagged {
		both := flagged[lk.Reverse()]
		if both && !lk.Forward() {
			continue // reported with its forward direction
		}
		name, way := t.LinkName(lk), "it"
		n, chance := flows[lk], math.Exp(miss[lk])
		if both {
			name, way = t.CableName(lk.Cable()), "it either way"
			n += flows[lk.Reverse()]
			chance *= math.Exp(miss[lk.Reverse()])
		}
		out = append(out, Warning{Kind: WarnLinkUnused, Link: name, Rail: t.Switches[t.LinkFrom(lk).Switch].Plane,
			Reason: fmt.Sprintf("none of the %d traced flows that could take %s crossed %s (were it up and in the ECMP hash, "+
				"the chance of that is %s): equal-cost routing went around it, so the fabric runs on fewer paths than it was built with",
				n, name, way, chanceText(chance)),
			Fix: fmt.Sprintf("check the link's state and its routes on both switches (%s): it is down, or its next hop was withdrawn", name)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Link < out[j].Link })
	return out
}

func chanceText(p float64) string {
	if p < 1e-6 {
		return "below one in a million"
	}
	return fmt.Sprintf("%.2g%%", 100*p)
}

// tracedCell is the tested cell a traced flow belongs to, as an index
// into the scan's cells; ok is false for a flow of no tested cell or of
// an endpoint that explains its own cells.
func (ls *linkScan) tracedCell(k tracedKey) (at int, ok bool) {
	R := ls.l.m.Rails
	a, okA := ls.nodeIndex(k.src)
	b, okB := ls.nodeIndex(k.dst)
	if !okA || !okB || k.rail < 0 || k.rail >= R || ls.hard[a*R+k.rail] || ls.hard[b*R+k.rail] {
		return 0, false
	}
	sp := ls.span(k.rail)
	if sp == nil {
		return 0, false
	}
	i, j := sort.SearchInts(sp.members, a), sort.SearchInts(sp.members, b)
	if i == len(sp.members) || j == len(sp.members) || sp.members[i] != a || sp.members[j] != b {
		return 0, false
	}
	at = sp.at(i, j)
	return at, ls.l.testedAt(at)
}
