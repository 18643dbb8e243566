package matrix

import (
	"sort"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// Localization asks, rail by rail, which single component explains the bad
// cells best, from the widest to the narrowest:
//
//	rail  most cells bad and no HCA stands out   → the switch/SM/cabling
//	hca   its row and column mostly bad          → that port, its cable, its PCIe
//	hca   only its row (or column) mostly bad    → one direction of that port
//	pair  anything left over                     → the route between two ports
//
// and then across rails: a node blamed on every rail it has is one node
// suspect. A cell explained by a wider suspect never also blames a narrower
// one, which is what keeps the peers of a dead HCA out of the list.
const (
	mostlyShare = 0.75 // this share of bad cells blames a row, column or rail as a whole
	fineShare   = 0.25 // background cleaner than this counts as "the peers are fine"
)

func mostly(bad, total int) bool { return total > 0 && float64(bad) >= mostlyShare*float64(total) }
func fine(bad, total int) bool   { return total > 0 && float64(bad) < fineShare*float64(total) }

// isBad is true for cells that implicate hardware. Untested cells do not:
// absence of a result says nothing about an HCA, and blaming one would send
// an operator to a healthy port. They still make the matrix unhealthy.
func isBad(c *Result) bool    { return c.Verdict != VerdictOK && c.Verdict != VerdictUntested }
func isTested(c *Result) bool { return c.Verdict != VerdictUntested }

type side uint8

const (
	sideOut side = 1 << iota // as initiator (row)
	sideIn                   // as target (column)
)

// finding is an HCA blamed on one rail, kept apart until node collapse
// decides whether it stands alone.
type finding struct {
	node, rail int
	sides      side
	cells      []int // bad cells it explains, indices into Matrix.Cells
	rowBad     int
	rowTested  int
	colBad     int
	colTested  int
	bgBad      int // cells on the rail touching no blamed HCA
	bgTested   int
	collapsed  bool
}

type localizer struct {
	m         *Matrix
	spans     []railSpan
	explained []bool // per Matrix.Cells index
	absorbed  []bool // node*Rails+rail: a rail suspect explains the node's cells there
	tested    []int  // node*Rails+rail: tested cells touching the node there
	findings  []finding
	out       []Suspect
}

func localize(m *Matrix, spans []railSpan) []Suspect {
	out := []Suspect{}
	// Before the first result lands there is nothing to localize, and a list
	// of "untested" suspects for every node would only be noise.
	if m.Counts[VerdictUntested] == len(m.Cells) {
		return out
	}
	l := &localizer{
		m:         m,
		spans:     spans,
		explained: make([]bool, len(m.Cells)),
		absorbed:  make([]bool, len(m.Nodes)*m.Rails),
		tested:    make([]int, len(m.Nodes)*m.Rails),
		out:       out,
	}
	for i := range spans {
		l.rail(&spans[i])
	}
	l.collapseNodes()
	for i := range l.findings {
		if f := &l.findings[i]; !f.collapsed {
			l.out = append(l.out, l.hcaSuspect(f))
		}
	}
	l.untestedNodes()
	sortSuspects(l.out)
	return l.out
}

// railCounts are one rail's row and column tallies, by member position.
type railCounts struct {
	rowBad, rowTested, colBad, colTested []int
	bad, tested                          int
}

func (l *localizer) count(sp *railSpan) railCounts {
	m := len(sp.members)
	rc := railCounts{
		rowBad: make([]int, m), rowTested: make([]int, m),
		colBad: make([]int, m), colTested: make([]int, m),
	}
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			if i == j {
				continue
			}
			c := &l.m.Cells[sp.at(i, j)]
			if !isTested(c) {
				continue
			}
			rc.rowTested[i]++
			rc.colTested[j]++
			rc.tested++
			if isBad(c) {
				rc.rowBad[i]++
				rc.colBad[j]++
				rc.bad++
			}
		}
	}
	for i, n := range sp.members {
		l.tested[n*l.m.Rails+sp.rail] = rc.rowTested[i] + rc.colTested[i]
	}
	return rc
}

func (l *localizer) rail(sp *railSpan) {
	m := len(sp.members)
	if m < 2 {
		return
	}
	rc := l.count(sp)
	if rc.bad == 0 {
		return
	}
	blamed := make([]bool, m)
	nBlamed, affected := 0, 0
	for i := 0; i < m; i++ {
		if mostly(rc.rowBad[i], rc.rowTested[i]) && mostly(rc.colBad[i], rc.colTested[i]) {
			blamed[i] = true
			nBlamed++
		}
		if rc.rowBad[i]+rc.colBad[i] > 0 {
			affected++
		}
	}
	bgBad, bgTested := l.background(sp, blamed)
	// Most cells bad is not enough for a rail verdict: two dead HCAs out of
	// four also spoil most cells, yet the other two talk fine. Blame the
	// rail only when the HCAs that look bad are most of the rail, or the
	// cells between the rest are bad too.
	if mostly(rc.bad, rc.tested) && affected > 2 &&
		(float64(nBlamed) >= mostlyShare*float64(m) || mostly(bgBad, bgTested)) {
		l.railSuspect(sp, rc, affected)
		return
	}
	if nBlamed == m {
		// Only two HCAs, each failing against the other: the matrix alone
		// cannot tell which end is broken. Membership or port state may.
		l.disambiguate(sp, blamed)
		bgBad, bgTested = l.background(sp, blamed)
	}
	for i := 0; i < m; i++ {
		if blamed[i] {
			f := finding{node: sp.members[i], rail: sp.rail, sides: sideOut | sideIn,
				rowBad: rc.rowBad[i], rowTested: rc.rowTested[i],
				colBad: rc.colBad[i], colTested: rc.colTested[i],
				bgBad: bgBad, bgTested: bgTested}
			l.accept(sp, i, &f)
		}
	}
	l.oneSided(sp, blamed)
	l.pairs(sp)
}

// background tallies the cells on a rail that touch no blamed member: the
// "peers' other cells" a blame is measured against.
func (l *localizer) background(sp *railSpan, blamed []bool) (bad, tested int) {
	m := len(sp.members)
	for i := 0; i < m; i++ {
		if blamed[i] {
			continue
		}
		for j := 0; j < m; j++ {
			if i == j || blamed[j] {
				continue
			}
			c := &l.m.Cells[sp.at(i, j)]
			if isTested(c) {
				tested++
				if isBad(c) {
					bad++
				}
			}
		}
	}
	return bad, tested
}

// disambiguate keeps the blame on the one end with independent evidence
// (a dead member, a port not ACTIVE); without it both are cleared and the
// cells fall through to a pair suspect, which claims no more than we know.
func (l *localizer) disambiguate(sp *railSpan, blamed []bool) {
	var withEvidence []int
	for i, n := range sp.members {
		if blamed[i] && (l.memberNote(n) != "" || l.portNote(n, sp.rail) != "") {
			withEvidence = append(withEvidence, i)
		}
	}
	keep := -1
	if len(withEvidence) == 1 {
		keep = withEvidence[0]
	}
	for i := range blamed {
		blamed[i] = i == keep
	}
}

// accept records a finding for member i, taking the bad cells on the sides
// it covers and marking them explained.
func (l *localizer) accept(sp *railSpan, i int, f *finding) {
	for j := range sp.members {
		if j == i {
			continue
		}
		if f.sides&sideOut != 0 {
			l.take(f, sp.at(i, j))
		}
		if f.sides&sideIn != 0 {
			l.take(f, sp.at(j, i))
		}
	}
	l.findings = append(l.findings, *f)
}

func (l *localizer) take(f *finding, k int) {
	if isBad(&l.m.Cells[k]) {
		f.cells = append(f.cells, k)
		l.explained[k] = true
	}
}

// oneSided blames an HCA that is bad in one direction only (a failing
// transmit lane, a one-way MTU or route problem): every cell of its row, or
// of its column, is bad against peers that are otherwise fine. It needs two
// such cells, or a single bad pair would be called an HCA.
func (l *localizer) oneSided(sp *railSpan, blamed []bool) {
	m := len(sp.members)
	type cand struct {
		i              int
		sides          side
		rb, rt, cb, ct int
	}
	var cands []cand
	wider := make([]bool, m) // blamed already, or blamed here
	copy(wider, blamed)
	for i := 0; i < m; i++ {
		if blamed[i] {
			continue
		}
		c := cand{i: i}
		for j := 0; j < m; j++ {
			if j == i || blamed[j] {
				continue
			}
			if k := sp.at(i, j); isTested(&l.m.Cells[k]) {
				c.rt++
				if isBad(&l.m.Cells[k]) && !l.explained[k] {
					c.rb++
				}
			}
			if k := sp.at(j, i); isTested(&l.m.Cells[k]) {
				c.ct++
				if isBad(&l.m.Cells[k]) && !l.explained[k] {
					c.cb++
				}
			}
		}
		if c.rt >= 2 && mostly(c.rb, c.rt) {
			c.sides |= sideOut
		}
		if c.ct >= 2 && mostly(c.cb, c.ct) {
			c.sides |= sideIn
		}
		if c.sides != 0 {
			cands = append(cands, c)
			wider[i] = true
		}
	}
	if len(cands) == 0 {
		return
	}
	bgBad, bgTested := l.background(sp, wider)
	if !fine(bgBad, bgTested) {
		return // the whole rail is noisy; pairs show it without a false blame
	}
	for _, c := range cands {
		f := finding{node: sp.members[c.i], rail: sp.rail, sides: c.sides,
			rowBad: c.rb, rowTested: c.rt, colBad: c.cb, colTested: c.ct,
			bgBad: bgBad, bgTested: bgTested}
		l.accept(sp, c.i, &f)
	}
}

// pairs turns what no wider suspect explains into one suspect per unordered
// pair, both directions together, since they share the same route.
func (l *localizer) pairs(sp *railSpan) {
	m := len(sp.members)
	for i := 0; i < m; i++ {
		for j := i + 1; j < m; j++ {
			a, b := sp.at(i, j), sp.at(j, i)
			badA := isBad(&l.m.Cells[a]) && !l.explained[a]
			badB := isBad(&l.m.Cells[b]) && !l.explained[b]
			if !badA && !badB {
				continue
			}
			var cells []int
			src, dst := sp.members[i], sp.members[j]
			if badA {
				cells = append(cells, a)
			}
			if badB {
				cells = append(cells, b)
				if !badA {
					src, dst = dst, src
				}
			}
			total := 0
			for _, k := range []int{a, b} {
				if isTested(&l.m.Cells[k]) {
					total++
				}
				if isBad(&l.m.Cells[k]) {
					l.explained[k] = true
				}
			}
			l.out = append(l.out, l.pairSuspect(src, dst, sp.rail, cells, total, badA && badB))
		}
	}
}

func (l *localizer) railSuspect(sp *railSpan, rc railCounts, affected int) {
	var cells []int
	end := sp.start + len(sp.members)*(len(sp.members)-1)
	for k := sp.start; k < end; k++ {
		if isBad(&l.m.Cells[k]) {
			cells = append(cells, k)
			l.explained[k] = true
		}
	}
	for _, n := range sp.members {
		l.absorbed[n*l.m.Rails+sp.rail] = true
	}
	l.out = append(l.out, l.railSuspectFor(sp.rail, cells, rc.tested, affected, len(sp.members)))
}

// collapseNodes merges a node's HCA findings into one node suspect when
// every rail that could speak about it blames it: then the common factor is
// the host (PCIe root, CPU, the worker), not one HCA. Rails a rail suspect
// already explains say nothing about the node and are left out. One rail is
// not enough to tell the node from its HCA, unless the cells say the worker
// itself is gone (peer-lost).
func (l *localizer) collapseNodes() {
	byNode := make(map[int][]int)
	for i, f := range l.findings {
		byNode[f.node] = append(byNode[f.node], i)
	}
	for n := range l.m.Nodes {
		fs := byNode[n]
		if len(fs) == 0 {
			continue
		}
		informative := 0
		for r := 0; r < l.m.Rails; r++ {
			if l.tested[n*l.m.Rails+r] > 0 && !l.absorbed[n*l.m.Rails+r] {
				informative++
			}
		}
		if len(fs) != informative {
			continue
		}
		bad, total := l.nodeCells(n)
		peerLost := dominant(l.m.Cells, bad).class == probe.ClassPeerLost
		if len(fs) < 2 && !peerLost {
			continue
		}
		for _, i := range fs {
			l.findings[i].collapsed = true
		}
		l.out = append(l.out, l.nodeSuspect(n, bad, total, len(fs)))
	}
}

// nodeCells lists a node's bad cells on every rail and counts its tested ones.
func (l *localizer) nodeCells(n int) (bad []int, tested int) {
	for si := range l.spans {
		sp := &l.spans[si]
		i := sort.SearchInts(sp.members, n)
		if i == len(sp.members) || sp.members[i] != n {
			continue
		}
		for j := range sp.members {
			if j == i {
				continue
			}
			for _, k := range []int{sp.at(i, j), sp.at(j, i)} {
				c := &l.m.Cells[k]
				if isTested(c) {
					tested++
				}
				if isBad(c) {
					bad = append(bad, k)
				}
			}
		}
	}
	sort.Ints(bad)
	return bad, tested
}

// untestedNodes names nodes no cell measured at all while the rest of the
// fabric was: typically a worker that never joined the sweep.
func (l *localizer) untestedNodes() {
	for n := range l.m.Nodes {
		var cells []int
		tested := false
		for si := range l.spans {
			sp := &l.spans[si]
			i := sort.SearchInts(sp.members, n)
			if i == len(sp.members) || sp.members[i] != n {
				continue
			}
			for j := range sp.members {
				if j == i {
					continue
				}
				for _, k := range []int{sp.at(i, j), sp.at(j, i)} {
					if isTested(&l.m.Cells[k]) {
						tested = true
					}
					cells = append(cells, k)
				}
			}
		}
		if !tested && len(cells) > 0 {
			sort.Ints(cells)
			l.out = append(l.out, l.untestedSuspect(n, cells))
		}
	}
}

var kindRank = map[string]int{KindRail: 0, KindNode: 1, KindHCA: 2, KindPair: 3}

// sortSuspects puts the most implicated first: most bad cells, then the
// wider component, then a fixed order so equal sweeps give equal lists.
func sortSuspects(s []Suspect) {
	sort.SliceStable(s, func(a, b int) bool {
		x, y := &s[a], &s[b]
		if x.Bad != y.Bad {
			return x.Bad > y.Bad
		}
		if kindRank[x.Kind] != kindRank[y.Kind] {
			return kindRank[x.Kind] < kindRank[y.Kind]
		}
		if x.Rail != y.Rail {
			return x.Rail < y.Rail
		}
		if c := strings.Compare(x.Node, y.Node); c != 0 {
			return c < 0
		}
		if c := strings.Compare(x.Peer, y.Peer); c != 0 {
			return c < 0
		}
		return x.Device < y.Device
	})
}
