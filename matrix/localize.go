package matrix

// Localization asks, rail by rail, which single component explains the bad
// cells best, from the widest to the narrowest:
//
//	group its border cells bad, the rest fine    → the leaf switch or its uplinks
//	rail  most cells bad and no HCA stands out   → the switch/SM/cabling
//	hca   its row and column mostly bad          → that port, its cable, its PCIe
//	hca   only its row (or column) mostly bad    → one direction of that port
//	pair  anything left over                     → the route between two ports
//
// and then across rails: a node (or group) blamed on every rail it has is one
// node (or group) suspect. A cell explained by a wider suspect never also blames a narrower
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
func isBad(c *Result) bool      { return badVerdict(c.Verdict) }
func isTested(c *Result) bool   { return c.Verdict != VerdictUntested }
func badVerdict(v Verdict) bool { return v != VerdictOK && v != VerdictUntested }

// Cell state bits, one byte per cell. Localization walks every rail's rows
// and columns several times; at 8 M cells, reading a byte instead of a
// 150-byte Result is what keeps that inside the CPU caches.
const (
	stTested uint8 = 1 << iota
	stBad
	stFailed    // failed outright (verdict failed), not merely slow
	stExplained // a chosen suspect explains it
	stByGroup   // a switch group's suspect explains it
)

func (l *localizer) testedAt(k int) bool    { return l.state[k]&stTested != 0 }
func (l *localizer) explainedAt(k int) bool { return l.state[k]&stExplained != 0 }
func (l *localizer) badAt(k int) bool       { return l.state[k]&stBad != 0 }

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
	// from is the round its cells fail from (fromRound), 0 otherwise;
	// rowBad..colTested then count only from that round on, and before
	// is how many of its cells were fine earlier.
	from, before int
	// downs is how many times its port counted its link going down
	// during the sweep, when that is what blamed it (flap.go).
	downs uint64
}

type localizer struct {
	m      *Matrix
	a      *analysis // the cells, compact
	spans  []railSpan
	groups groupSet
	// state is a byte per Matrix.Cells index: the st bits. One array, not
	// a bool array per bit: at 16,384 x 8 a per-cell array is 2.1 GB.
	state     []uint8
	absorbed  []bool // node*Rails+rail: a rail suspect explains the node's cells there
	grouped   []bool // node*Rails+rail: a switch-group suspect explains them
	tested    []int  // node*Rails+rail: tested cells touching the node there
	findings  []finding
	gfindings []groupFinding
	out       []Suspect
}

func localize(m *Matrix, a *analysis, groups groupSet) []Suspect {
	out := []Suspect{}
	n := len(a.cells)
	// Before the first result lands there is nothing to localize, and a list
	// of "untested" suspects for every node would only be noise.
	if m.Counts[VerdictUntested] == n {
		return out
	}
	spans := a.spans
	l := &localizer{
		m:        m,
		a:        a,
		spans:    spans,
		groups:   groups,
		state:    make([]uint8, n),
		absorbed: make([]bool, len(m.Nodes)*m.Rails),
		grouped:  make([]bool, len(m.Nodes)*m.Rails),
		tested:   make([]int, len(m.Nodes)*m.Rails),
		out:      out,
	}
	for k := range l.state {
		switch a.verdict(k) {
		case VerdictOK:
			l.state[k] = stTested
		case VerdictUntested:
		case VerdictFailed:
			l.state[k] = stTested | stBad | stFailed
		default:
			l.state[k] = stTested | stBad
		}
	}
	for i := range spans {
		l.rail(&spans[i])
	}
	l.collapseGroups()
	l.collapseNodes()
	for i := range l.findings {
		if f := &l.findings[i]; !f.collapsed {
			l.out = append(l.out, l.hcaSuspect(f))
		}
	}
	if !m.Thresholds.TestedOnly {
		l.untestedNodes()
	}
	l.noteWideRails()
	if a.topo != nil {
		l.links(a.topo, a.traced)
	}
	for i := range l.out {
		l.noisy(&l.out[i])
	}
	for i := range l.out {
		weakNote(&l.out[i])
	}
	sortSuspects(l.out)
	return l.out
}

// railCounts are one rail's row and column tallies, by member position.
type railCounts struct {
	rowBad, rowTested, colBad, colTested []int
	bad, tested                          int
}

// count tallies a rail. The first count (all) also records each node's
// tested cells; a recount after switch groups leaves out what they explain.
// With hard (nil: none), each member's tallies leave out its cells with a
// hard member, whose own tallies stay whole.
func (l *localizer) count(sp *railSpan, all bool, hard []bool) railCounts {
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
			k := sp.at(i, j)
			if !l.testedAt(k) || (!all && l.explainedAt(k)) {
				continue
			}
			bad := l.badAt(k)
			rc.tested++
			if bad {
				rc.bad++
			}
			if hard == nil || hard[i] || !hard[j] { // the row's tally: i's own
				rc.rowTested[i]++
				if bad {
					rc.rowBad[i]++
				}
			}
			if hard == nil || hard[j] || !hard[i] { // the column's tally: j's own
				rc.colTested[j]++
				if bad {
					rc.colBad[j]++
				}
			}
		}
	}
	if all && hard == nil {
		for i, n := range sp.members {
			l.tested[n*l.m.Rails+sp.rail] = rc.rowTested[i] + rc.colTested[i]
		}
	}
	return rc
}

func (l *localizer) rail(sp *railSpan) {
	m := len(sp.members)
	if m < 2 {
		return
	}
	rc := l.count(sp, true, nil)
	if rc.bad == 0 {
		return
	}
	grouped := l.groupsOnRail(sp)
	if grouped {
		rc = l.count(sp, false, nil)
	}
	// Members that fail outright on both sides are blamed first, and
	// their cells are theirs: a healthy peer's cell with a dead HCA is
	// the dead HCA's evidence, not the peer's (it would otherwise count
	// as the peer's hard failure, and on a small or noisy rail blame it).
	hard := l.hardOnRail(sp, grouped)
	side := rc
	if hard != nil {
		side = l.count(sp, !grouped, hard)
	}
	blamed := make([]bool, m)
	nBlamed, affected := 0, 0
	for i := 0; i < m; i++ {
		if mostly(side.rowBad[i], side.rowTested[i]) && mostly(side.colBad[i], side.colTested[i]) {
			blamed[i] = true
			nBlamed++
		}
		if side.rowBad[i]+side.colBad[i] > 0 {
			affected++
		}
	}
	bgBad, bgTested := l.background(sp, blamed)
	// Most cells bad is not enough for a rail verdict: two dead HCAs out of
	// four also spoil most cells, yet the other two talk fine. Blame the
	// rail only when the HCAs that look bad are most of the rail, or the
	// cells between the rest are bad too.
	if !grouped && mostly(rc.bad, rc.tested) && affected > 2 &&
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
				rowBad: side.rowBad[i], rowTested: side.rowTested[i],
				colBad: side.colBad[i], colTested: side.colTested[i],
				bgBad: bgBad, bgTested: bgTested}
			var skip []bool
			if hard != nil && !hard[i] {
				skip = hard
			}
			l.accept(sp, i, &f, skip)
		}
	}
	l.oneSided(sp, blamed)
	l.fromRound(sp, blamed)
	l.flapping(sp, blamed)
	if grouped {
		l.regroundGroups(sp)
	}
	l.pairs(sp, rc)
}

// hardOnRail marks the members whose cells failed outright on both sides
// (mostly, as the rail's other blames count); nil when none did. With
// switch groups, the cells a group explains are left out, as count does.
func (l *localizer) hardOnRail(sp *railSpan, grouped bool) []bool {
	m := len(sp.members)
	rowF, rowT, colF, colT := make([]int, m), make([]int, m), make([]int, m), make([]int, m)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			if i == j {
				continue
			}
			k := sp.at(i, j)
			if !l.testedAt(k) || (grouped && l.explainedAt(k)) {
				continue
			}
			rowT[i]++
			colT[j]++
			if l.state[k]&stFailed != 0 {
				rowF[i]++
				colF[j]++
			}
		}
	}
	var hard []bool
	for i := 0; i < m; i++ {
		if mostly(rowF[i], rowT[i]) && mostly(colF[i], colT[i]) {
			if hard == nil {
				hard = make([]bool, m)
			}
			hard[i] = true
		}
	}
	return hard
}

// background tallies the cells on a rail that touch no blamed member and
// no wider suspect explains: the "peers' other cells" a blame is measured
// against.
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
			k := sp.at(i, j)
			if l.testedAt(k) && !l.explainedAt(k) {
				tested++
				if l.badAt(k) {
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
//
// skip (nil: none) are members whose cells the finding did not count: a
// one-sided HCA is judged against healthy peers only, so cells to an HCA
// blamed on both sides stay that HCA's and Bad never exceeds Total.
func (l *localizer) accept(sp *railSpan, i int, f *finding, skip []bool) {
	for j := range sp.members {
		if j == i || (skip != nil && skip[j]) {
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

// take claims a bad cell for an HCA finding. Two blamed HCAs both claim
// the cell between them (each is bad there), but a cell a switch group
// explains belongs to the group alone.
func (l *localizer) take(f *finding, k int) {
	if l.badAt(k) && l.state[k]&stByGroup == 0 {
		f.cells = append(f.cells, k)
		l.state[k] |= stExplained
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
			if k := sp.at(i, j); l.testedAt(k) && !l.explainedAt(k) {
				c.rt++
				if l.badAt(k) && !l.explainedAt(k) {
					c.rb++
				}
			}
			if k := sp.at(j, i); l.testedAt(k) && !l.explainedAt(k) {
				c.ct++
				if l.badAt(k) && !l.explainedAt(k) {
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
	pos := make([]int, len(cands))
	fs := make([]finding, len(cands))
	for n, c := range cands {
		pos[n] = c.i
		fs[n] = finding{node: sp.members[c.i], rail: sp.rail, sides: c.sides,
			rowBad: c.rb, rowTested: c.rt, colBad: c.cb, colTested: c.ct}
	}
	l.acceptIfClean(sp, blamed, wider, pos, fs)
}

// acceptIfClean blames candidates judged against healthy peers (fs, of
// the members at positions pos) only when the rail's background without
// them (wider: them and the HCAs blamed before) is clean: otherwise the
// whole rail is noisy, and pairs show it without a false blame.
func (l *localizer) acceptIfClean(sp *railSpan, blamed, wider []bool, pos []int, fs []finding) {
	if len(fs) == 0 {
		return
	}
	bgBad, bgTested := l.background(sp, wider)
	if !fine(bgBad, bgTested) {
		return
	}
	for n := range fs {
		fs[n].bgBad, fs[n].bgTested = bgBad, bgTested
		l.accept(sp, pos[n], &fs[n], blamed)
	}
}

// pairs turns what no wider suspect explains into one suspect per unordered
// pair, both directions together, since they share the same route. rc is
// the rail's tally, the background a pair is compared with.
func (l *localizer) pairs(sp *railSpan, rc railCounts) {
	m := len(sp.members)
	for i := 0; i < m; i++ {
		for j := i + 1; j < m; j++ {
			a, b := sp.at(i, j), sp.at(j, i)
			badA := l.badAt(a) && !l.explainedAt(a)
			badB := l.badAt(b) && !l.explainedAt(b)
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
				if l.testedAt(k) {
					total++
				}
				if l.badAt(k) {
					l.state[k] |= stExplained
				}
			}
			l.out = append(l.out, l.pairSuspect(src, dst, sp.rail, cells, total, badA && badB, rc, m))
		}
	}
}

func (l *localizer) railSuspect(sp *railSpan, rc railCounts, affected int) {
	var cells []int
	end := sp.start + len(sp.members)*(len(sp.members)-1)
	for k := sp.start; k < end; k++ {
		if l.badAt(k) {
			cells = append(cells, k)
			l.state[k] |= stExplained
		}
	}
	for _, n := range sp.members {
		l.absorbed[n*l.m.Rails+sp.rail] = true
	}
	l.out = append(l.out, l.railSuspectFor(sp.rail, cells, rc.tested, affected, len(sp.members)))
}
