package matrix

import (
	"math"
	"slices"
	"sort"

	"github.com/rdmamesh/rdmamesh/topology"
)

// Link localization (network tomography) runs when the sweep has a
// topology: each bad cell is routed over the links its test crossed (its
// flow picks among equal paths), and the switches, cables and one-way
// links that the bad cells share while the tests through their siblings
// pass are named. An endpoint that fails outright (a dead port, a dead
// worker) explains its own cells first and lends them to no link.
//
// The tests through a component are counted in expectation: every cell's
// flow would have to be read to count them exactly, at 4,096 x 8 a
// hundred million reads, while the equal shares ECMP spreads flows over
// are known from the topology (InfiniBand, which routes by destination,
// is counted per destination exactly).
type linkScan struct {
	l   *localizer
	t   *topology.Topology
	tr  *Traced // measured paths (traced.go); nil: the model's
	hca []int32 // node*Rails+rail → topology HCA, -1
	// hard marks an endpoint whose failures explain its cells.
	hard []bool

	bad   []linkCell
	paths []topology.Link // the bad cells' links, flat

	// Bad and expected tested counts per switch, cable and directed link;
	// f counts the failed among the bad (the rest slow or narrow).
	bS, bC, bL []int
	fS, fC, fL []int
	tS, tC, tL []float64
	tested     float64
	badTotal   int
	noFlow     int // bad cells whose flow or traced path was unknown where paths differ
	// back: the cells carry their responders' flows, so a test's return
	// path (pongs, acknowledgements) counts as crossed too.
	back bool

	below []int // leaf index → an HCA below it
}

// linkCell is one bad cell the links may explain.
type linkCell struct {
	k          int
	node, peer int
	rail       int
	from, to   int32 // its links in paths
	mid        int32 // the end of its data path's links (its return path's follow)
	failed     bool
	done       bool // explained by a chosen component
	// first is the verdict of the first measurement of a cell its
	// retests cleared ("" for a cell bad on the whole).
	first Verdict
}

// Link significance: a component must gather linkMinBad bad cells and
// linkMinShare of its tests, lie linkZ standard deviations above what the
// background rate predicts, and
// be linkConcentrate times worse than the switch around it to be named
// instead of that switch.
const (
	linkMinBad = 3
	// linkMinBadSteered is linkMinBad where the sweep steered two tests
	// with other partners over every link (Thresholds.SteeredLinks): both
	// failing, while the sibling links' tests pass, is the design's signal.
	linkMinBadSteered = 2
	linkSteeredP      = 1e-4
	linkMinShare      = 0.02 // of the tests through it: a few tail outliers that cluster by chance are not a link
	linkZ             = 4.0
	linkConcentrate   = 2.0
	linkMaxSuspects   = 16
	// linkEcho: an endpoint or pair suspect whose bad cells the chosen
	// links explain to this share is an echo of them and is dropped.
	linkEcho = 0.6
)

func (l *localizer) links(t *topology.Topology, tr *Traced) {
	ls := &linkScan{l: l, t: t, tr: tr}
	if !ls.mapHCAs() {
		return
	}
	ls.markHard()
	ls.collect()
	ls.collectRetested()
	if len(ls.bad) == 0 {
		return
	}
	ls.expect()
	l.m.LinkLoads = ls.loads()
	chosen := append(ls.hopChoices(l.a.hops), ls.choose()...)
	if len(chosen) == 0 {
		return
	}
	var made []Suspect
	for _, c := range chosen {
		if s, ok := ls.suspect(c); ok {
			made = append(made, s)
		}
	}
	ls.dropEchoes()
	l.out = append(l.out, made...)
}

func (ls *linkScan) mapHCAs() bool {
	m := ls.l.m
	ls.hca = make([]int32, len(m.Nodes)*m.Rails)
	any := false
	for n, node := range m.Nodes {
		for r := range m.Rails {
			h, ok := ls.t.HCA(node.Name, r)
			ls.hca[n*m.Rails+r] = -1
			if ok {
				ls.hca[n*m.Rails+r] = int32(h)
				any = true
			}
		}
	}
	return any
}

// markHard marks the endpoints that explain their own cells: those whose
// cells mostly failed outright (a dead port fails every test whatever
// path it takes), and every rail of a node suspect (a node bad on all its
// rails is its PCIe, CPU or memory, not eight cables).
func (ls *linkScan) markHard() {
	l := ls.l
	R := l.m.Rails
	ls.hard = make([]bool, len(ls.hca))
	for i := range l.findings {
		f := &l.findings[i]
		failed := 0
		for _, k := range f.cells {
			if l.state[k]&stFailed != 0 {
				failed++
			}
		}
		if len(f.cells) > 0 && 2*failed >= len(f.cells) && mostly(f.rowBad+f.colBad, f.rowTested+f.colTested) &&
			!ls.fineBelowLeaf(f) {
			ls.hard[f.node*R+f.rail] = true
		}
	}
	idx := make(map[string]int, len(l.m.Nodes))
	for i, n := range l.m.Nodes {
		idx[n.Name] = i
	}
	for _, s := range l.out {
		if n, ok := idx[s.Node]; ok && s.Kind == KindNode {
			for r := range R {
				ls.hard[n*R+r] = true
			}
		}
	}
}

// fineBelowLeaf reports whether an HCA that fails with its peers on other
// leaves talks fine with those on its own leaf: then the fault is above
// the leaf. InfiniBand routes by destination, so one dead uplink or spine
// fails every test towards the HCAs routed over it, which looks like a
// dead port until the same-leaf cells say otherwise.
func (ls *linkScan) fineBelowLeaf(f *finding) bool {
	l, t := ls.l, ls.t
	R := l.m.Rails
	h := ls.hca[f.node*R+f.rail]
	if h < 0 {
		return false
	}
	leaf := t.LeafOf(int(h))
	sp := ls.span(f.rail)
	if sp == nil {
		return false
	}
	i := sort.SearchInts(sp.members, f.node)
	if i >= len(sp.members) || sp.members[i] != f.node {
		return false
	}
	tested, bad := 0, 0
	for j, n := range sp.members {
		hn := ls.hca[n*R+f.rail]
		if j == i || hn < 0 || t.LeafOf(int(hn)) != leaf {
			continue
		}
		for _, k := range []int{sp.at(i, j), sp.at(j, i)} {
			if l.testedAt(k) {
				tested++
				if l.badAt(k) {
					bad++
				}
			}
		}
	}
	return tested >= 2 && fine(bad, tested)
}

// collect routes every bad cell that no hard endpoint explains.
func (ls *linkScan) collect() {
	l, t := ls.l, ls.t
	R := l.m.Rails
	nS, nC := len(t.Switches), len(t.Cables)
	ls.bS, ls.bC, ls.bL = make([]int, nS), make([]int, nC), make([]int, 2*nC)
	ls.fS, ls.fC, ls.fL = make([]int, nS), make([]int, nC), make([]int, 2*nC)
	var sw []int
	for si := range l.spans {
		sp := &l.spans[si]
		m := len(sp.members)
		for i := 0; i < m; i++ {
			a := sp.members[i]
			ha := ls.hca[a*R+sp.rail]
			if ha < 0 || ls.hard[a*R+sp.rail] {
				continue
			}
			for j := 0; j < m; j++ {
				if i == j {
					continue
				}
				k := sp.at(i, j)
				if !l.badAt(k) {
					continue
				}
				b := sp.members[j]
				hb := ls.hca[b*R+sp.rail]
				if hb < 0 || ls.hard[b*R+sp.rail] {
					continue
				}
				var c Cell
				l.a.g.fill(&c, a, b, sp.rail)
				if c.Flow == 0 && t.LinkLayer == topology.RoCE && t.LeafOf(int(ha)) != t.LeafOf(int(hb)) {
					ls.noFlow++
					continue
				}
				if len(ls.bad) == 0 && ls.noFlow == 0 {
					ls.back = c.BackFlow != 0 || t.LinkLayer == topology.InfiniBand
				}
				from := int32(len(ls.paths))
				var ok bool
				if ls.paths, ok = ls.route(ls.paths, a, b, sp.rail, ha, hb, false, c.Flow); !ok {
					ls.paths = ls.paths[:from]
					ls.noFlow++
					continue
				}
				mid := int32(len(ls.paths))
				if ls.back {
					ls.paths, _ = ls.route(ls.paths, a, b, sp.rail, ha, hb, true, c.BackFlow)
				}
				lc := linkCell{k: k, node: a, peer: b, rail: sp.rail, from: from, mid: mid, to: int32(len(ls.paths)),
					failed: l.state[k]&stFailed != 0}
				ls.bad = append(ls.bad, lc)
				sw = ls.count(&lc, sw, 1)
			}
		}
	}
	ls.badTotal = len(ls.bad)
}

// count adds (d = 1) or removes (d = -1) a bad cell from the tallies,
// each component once however often its paths cross it.
func (ls *linkScan) count(c *linkCell, sw []int, d int) []int {
	path := ls.paths[c.from:c.to]
	f := d * b2i(c.failed)
	for i, lk := range path {
		ls.bL[lk] += d
		ls.fL[lk] += f
		if !seenCable(path[:i], lk.Cable()) {
			ls.bC[lk.Cable()] += d
			ls.fC[lk.Cable()] += f
		}
	}
	sw = ls.t.SwitchesOn(sw[:0], path)
	for i, s := range sw {
		if !slices.Contains(sw[:i], s) {
			ls.bS[s] += d
			ls.fS[s] += f
		}
	}
	return sw
}

func seenCable(path []topology.Link, c int) bool {
	for _, lk := range path {
		if lk.Cable() == c {
			return true
		}
	}
	return false
}

// expect counts the tests through every component: host cables from each
// HCA's own cells, leaves from the cells with an end below them, the rest
// from the equal-cost spread of each pair of leaves' cells.
func (ls *linkScan) expect() {
	l, t := ls.l, ls.t
	R := l.m.Rails
	nS, nC, nL := len(t.Switches), len(t.Cables), t.Leaves()
	ls.tS, ls.tC, ls.tL = make([]float64, nS), make([]float64, nC), make([]float64, 2*nC)
	row, col := make([]float64, len(t.HCAs)), make([]float64, len(t.HCAs))
	leafT := make([]float64, nL) // cells with an end below the leaf
	ib := t.LinkLayer == topology.InfiniBand
	var groups []float64 // leaf x leaf, RoCE
	var toHCA map[int][]float64
	if ib {
		toHCA = map[int][]float64{}
	} else {
		groups = make([]float64, nL*nL)
	}
	// Planes that share no switch (rail-optimized) need no count where no
	// bad cell is: nothing there can be a suspect.
	railBad := map[int]bool{}
	for i := range ls.bad {
		railBad[ls.bad[i].rail] = true
	}
	separate := true
	for _, sw := range t.Switches {
		separate = separate && sw.Plane >= 0
	}
	for si := range l.spans {
		sp := &l.spans[si]
		if separate && !railBad[sp.rail] {
			continue
		}
		m := len(sp.members)
		leaf := make([]int32, m)
		hs := make([]int32, m)
		for i, n := range sp.members {
			hs[i], leaf[i] = -1, -1
			if h := ls.hca[n*R+sp.rail]; h >= 0 && !ls.hard[n*R+sp.rail] {
				hs[i], leaf[i] = h, int32(t.LeafIndex(t.LeafOf(int(h))))
			}
		}
		for i := 0; i < m; i++ {
			if hs[i] < 0 {
				continue
			}
			for j := 0; j < m; j++ {
				if i == j || hs[j] < 0 || !l.testedAt(sp.at(i, j)) {
					continue
				}
				row[hs[i]]++
				col[hs[j]]++
				ls.tested++
				leafT[leaf[i]]++
				if leaf[j] != leaf[i] {
					leafT[leaf[j]]++
				}
				if ib {
					// By destination: the return path is routed to i.
					for _, e := range [][2]int{{i, j}, {j, i}}[:1+b2i(ls.back)] {
						v := toHCA[int(hs[e[1]])]
						if v == nil {
							v = make([]float64, nL)
							toHCA[int(hs[e[1]])] = v
						}
						v[leaf[e[0]]]++
					}
				} else {
					groups[int(leaf[i])*nL+int(leaf[j])]++
				}
			}
		}
	}
	for h := range t.HCAs {
		c := t.HCACable(h)
		up := t.Cables[c].A.IsHCA() && t.Cables[c].A.HCA == h
		fwd, rev := topology.Link(2*c), topology.Link(2*c+1)
		if !up {
			fwd, rev = rev, fwd
		}
		ls.tL[fwd] += row[h]
		ls.tL[rev] += col[h]
		if ls.back {
			ls.tL[fwd] += col[h]
			ls.tL[rev] += row[h]
		}
		ls.tC[c] += row[h] + col[h]
	}
	// A path's switches are counted once each: the leaves from their
	// cells' ends, the rest as the links arrive at them.
	addLink := func(lk topology.Link, share float64, dst int) {
		ls.tL[lk] += share
		ls.tC[lk.Cable()] += share
		if to := t.LinkTo(lk); !to.IsHCA() && to.Switch != dst {
			ls.tS[to.Switch] += share
		}
	}
	leafSwitch := ls.t.LeafSwitch
	for li, n := range leafT {
		ls.tS[leafSwitch(li)] += n
	}
	if ib {
		var buf []topology.Link
		for h, from := range toHCA {
			dl := t.LeafIndex(t.LeafOf(h))
			for li, n := range from {
				if n == 0 {
					continue
				}
				if li == dl {
					continue
				}
				// Route from any HCA below the leaf: IB's choice depends on
				// the destination alone.
				buf = ls.routeFromLeaf(buf[:0], li, h)
				for _, lk := range buf[1 : len(buf)-1] {
					addLink(lk, n, leafSwitch(dl))
				}
			}
		}
		return
	}
	if ls.measured() {
		ls.expectTraced(addLink)
		return
	}
	if l.m.Thresholds.SteeredLinks {
		ls.expectFlows(addLink)
		return
	}
	for a := range nL {
		for b := range nL {
			n := groups[a*nL+b]
			if n == 0 {
				continue
			}
			if a == b {
				continue
			}
			sa, sb := leafSwitch(a), leafSwitch(b)
			t.Spread(sa, sb, n, func(lk topology.Link, share float64) { addLink(lk, share, sb) })
			if ls.back {
				t.Spread(sb, sa, n, func(lk topology.Link, share float64) { addLink(lk, share, sa) })
			}
		}
	}
}

// routeFromLeaf routes from the first HCA below leaf li to HCA h.
func (ls *linkScan) routeFromLeaf(buf []topology.Link, li, h int) []topology.Link {
	if ls.below == nil {
		ls.below = make([]int, ls.t.Leaves())
		for i := range ls.below {
			ls.below[i] = -1
		}
		for x := range ls.t.HCAs {
			if i := ls.t.LeafIndex(ls.t.LeafOf(x)); ls.below[i] < 0 {
				ls.below[i] = x
			}
		}
	}
	p, _ := ls.t.Route(buf, ls.below[li], h, 0)
	return p
}

// minBad is the fewest bad tests that may name a link.
func (ls *linkScan) minBad() int {
	if ls.l.m.Thresholds.SteeredLinks {
		return linkMinBadSteered
	}
	return linkMinBad
}

// steeredBad is what the steered rule counts on cable c: every bad test
// on a cable between switches, only the failed ones on an HCA's own
// cable, whose tests are its HCA's: slow or narrow ones there are the
// endpoint rules' to judge against the rail's noise, and two of an HCA's
// few tests in a link sweep can be a healthy fabric's noise.
func (ls *linkScan) steeredBad(c int) int {
	if cb := ls.t.Cables[c]; cb.A.IsHCA() || cb.B.IsHCA() {
		return ls.fC[c]
	}
	return ls.bC[c]
}

// significant: b bad among about t tests, against the background rate.
// A steered sweep puts two or three tests through each link, too few for
// a z-score: there a component whose bad tests (s of them, as the
// steered rule counts them) are half of its tests is named when that
// many by chance, at the background rate outside it, would be rarer than
// linkSteeredP.
func (ls *linkScan) significant(b, f int, t, bg float64) bool {
	if t <= 0 {
		return false
	}
	if ls.l.m.Thresholds.SteeredLinks && f >= linkMinBadSteered {
		// The background without the component's own bad tests: in a
		// small fabric they are most of the bad ones.
		out := max(0, bg*ls.tested-float64(b)) / max(ls.tested-t, 1)
		if float64(f) >= t/2 && PoissonTail(f, t*out) < linkSteeredP {
			return true
		}
	}
	if b < linkMinBad || float64(b) < linkMinShare*t {
		return false
	}
	e := t * bg
	return (float64(b)-e)/math.Sqrt(e+1) >= linkZ
}

// PoissonTail is P(X >= k) for X Poisson with mean e: how often chance
// alone would give k or more events where e were expected.
func PoissonTail(k int, e float64) float64 {
	term, below := math.Exp(-e), 0.0
	for i := range k {
		below += term
		term *= e / float64(i+1)
	}
	return max(0, 1-below)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func ratio(b int, t float64) float64 {
	if t <= 0 {
		return 0
	}
	return float64(b) / t
}

// expectFlows counts, in a sweep that steered its tests, the tests
// through each link above the leaves exactly: each tested cell between
// leaves routed by the model of its own flow (and its responder's), as
// its bad cells are. The model's even spread would give each of a leaf's
// uplinks a fraction of the few tests that were steered onto one of them.
func (ls *linkScan) expectFlows(addLink func(lk topology.Link, share float64, dst int)) {
	l, t := ls.l, ls.t
	R := l.m.Rails
	var buf []topology.Link
	for si := range l.spans {
		sp := &l.spans[si]
		for i, a := range sp.members {
			ha := ls.hca[a*R+sp.rail]
			if ha < 0 || ls.hard[a*R+sp.rail] {
				continue
			}
			for j, b := range sp.members {
				hb := ls.hca[b*R+sp.rail]
				if i == j || hb < 0 || ls.hard[b*R+sp.rail] || t.LeafOf(int(ha)) == t.LeafOf(int(hb)) || !l.testedAt(sp.at(i, j)) {
					continue
				}
				var c Cell
				l.a.g.fill(&c, a, b, sp.rail)
				for _, back := range []bool{false, true}[:1+b2i(ls.back)] {
					flow := c.Flow
					if back {
						flow = c.BackFlow
					}
					var ok bool
					if buf, ok = ls.route(buf[:0], a, b, sp.rail, ha, hb, back, flow); !ok || len(buf) < 3 {
						continue
					}
					dst := t.LinkFrom(buf[len(buf)-1]).Switch
					for _, lk := range buf[1 : len(buf)-1] {
						addLink(lk, 1, dst)
					}
				}
			}
		}
	}
}
