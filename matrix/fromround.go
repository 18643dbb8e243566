package matrix

// Time: a port that goes down, a device removed or a worker killed in the
// middle of a sweep fails every cell it takes part in from that round on,
// while its earlier cells were fine. Counted over the whole sweep its row
// and column are only partly bad, so without the rounds it falls through
// to pair suspects (one per peer it met after the fault). fromRound looks
// at when cells failed: an HCA whose cells fail with two or more distinct
// peers from round k on, mostly failed since k and with at least one
// tested cell before, is blamed "from round k", its earlier ok cells
// counting for nothing. Its peers each fail with it alone (one distinct
// peer), so they are not blamed; a background that is not clean (the
// whole rail degrading) blames nobody, as for one-sided HCAs.

// minDistinctPeers is how many different peers must fail with an HCA from
// its round on: one is a pair.
const minDistinctPeers = 2

type roundCell struct {
	round, peer int
	failed, bad bool
	out         bool // the HCA initiated it
}

func (l *localizer) fromRound(sp *railSpan, blamed []bool) {
	m := len(sp.members)
	open := func(k int) bool { return l.testedAt(k) && !l.explainedAt(k) }
	failedOpen := func(k int) bool { return open(k) && l.a.verdict(k) == VerdictFailed }
	type cand struct {
		i, from, before int
		rb, rt, cb, ct  int
	}
	var cands []cand
	wider := make([]bool, m)
	copy(wider, blamed)
	p := l.a.peeker()
	for i := 0; i < m; i++ {
		if blamed[i] {
			continue
		}
		peers := 0 // from the verdict bytes first: most HCAs stop here
		for j := 0; j < m && peers < minDistinctPeers; j++ {
			if j != i && (failedOpen(sp.at(i, j)) || failedOpen(sp.at(j, i))) {
				peers++
			}
		}
		if peers < minDistinctPeers {
			continue
		}
		var cells []roundCell
		from := -1
		for j, o := range sp.members {
			if j == i {
				continue
			}
			n := sp.members[i]
			for _, c := range []struct {
				k, s, d int
				out     bool
			}{{sp.at(i, j), n, o, true}, {sp.at(j, i), o, n, false}} {
				if !open(c.k) {
					continue
				}
				rc := roundCell{round: p.peek(c.s, c.d, sp.rail).Round, peer: j, out: c.out,
					failed: l.a.verdict(c.k) == VerdictFailed, bad: l.badAt(c.k)}
				cells = append(cells, rc)
				if rc.failed && (from < 0 || rc.round < from) {
					from = rc.round
				}
			}
		}
		c := cand{i: i, from: from}
		before, failed := 0, 0
		distinct := map[int]bool{}
		for _, rc := range cells {
			if rc.round < from && !rc.bad {
				before++ // fine before the fault: counts for nothing
				continue
			}
			// From the round on every cell counts; a bad one before it
			// (slow, say) is taken with the rest, so it counts too.
			if rc.failed {
				failed++
				distinct[rc.peer] = true
			}
			if rc.out {
				c.rt++
				if rc.bad {
					c.rb++
				}
			} else {
				c.ct++
				if rc.bad {
					c.cb++
				}
			}
		}
		c.before = before
		if before == 0 || len(distinct) < minDistinctPeers || !mostly(failed, c.rt+c.ct) {
			continue
		}
		cands = append(cands, c)
		wider[i] = true
	}
	pos := make([]int, len(cands))
	fs := make([]finding, len(cands))
	for n, c := range cands {
		pos[n] = c.i
		fs[n] = finding{node: sp.members[c.i], rail: sp.rail, sides: sideOut | sideIn, from: c.from, before: c.before,
			rowBad: c.rb, rowTested: c.rt, colBad: c.cb, colTested: c.ct}
	}
	l.acceptIfClean(sp, blamed, wider, pos, fs)
}

// minFrom is the earliest round any part started failing from; 0 = none.
func minFrom(parts []*finding) int {
	from := 0
	for _, f := range parts {
		if f.from > 0 && (from == 0 || f.from < from) {
			from = f.from
		}
	}
	return from
}

// failedPeers counts the distinct peers among a finding's bad cells.
func failedPeers(l *localizer, f *finding) int {
	peers := map[int]bool{}
	for _, k := range f.cells {
		_, s, d := l.a.locate(k)
		if s == f.node {
			peers[d] = true
		} else {
			peers[s] = true
		}
	}
	return len(peers)
}
