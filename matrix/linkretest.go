package matrix

import (
	"slices"
	"sort"
)

// RetestSource is a Source that lists the cells it holds confirmation
// measurements for, so link localization finds them without reading
// every cell. Indices are the Source's, as in Fill.
type RetestSource interface {
	EachRetested(fn func(src, dst, rail int))
}

// collectRetested adds the cells a retest cleared whose first measurement
// was bad. A retest opens new QPs, and on RoCE a new QP is a new UDP
// source port: it crosses another path. "Best of n" is right for the
// cell (the two nodes can talk) but the first path was bad, and that is
// the evidence a gray link leaves: judged on its own, with its own flows
// (a cell's Flow is its first measurement's).
func (ls *linkScan) collectRetested() {
	l, g := ls.l, ls.l.a.g
	var cells [][3]int // sorted node indices and rail
	for i := range g.cells {
		if c := &g.cells[i]; len(c.Retests) > 0 {
			s, okS := ls.nodeIndex(c.Src)
			d, okD := ls.nodeIndex(c.Dst)
			if okS && okD {
				cells = append(cells, [3]int{s, d, c.Rail})
			}
		}
	}
	if rs, ok := g.src.(RetestSource); ok {
		inv := make(map[int]int, len(g.orig))
		for i, o := range g.orig {
			inv[o] = i
		}
		rs.EachRetested(func(src, dst, rail int) {
			s, okS := inv[src]
			d, okD := inv[dst]
			if okS && okD {
				cells = append(cells, [3]int{s, d, rail})
			}
		})
	}
	slices.SortFunc(cells, func(a, b [3]int) int {
		for i := range a {
			if a[i] != b[i] {
				return a[i] - b[i]
			}
		}
		return 0
	})
	cells = slices.Compact(cells)
	var sw []int
	R := l.m.Rails
	for _, x := range cells {
		s, d, rail := x[0], x[1], x[2]
		sp := ls.span(rail)
		if sp == nil || ls.hard[s*R+rail] || ls.hard[d*R+rail] {
			continue
		}
		i, j := sort.SearchInts(sp.members, s), sort.SearchInts(sp.members, d)
		if i >= len(sp.members) || j >= len(sp.members) || sp.members[i] != s || sp.members[j] != d {
			continue
		}
		k := sp.at(i, j)
		if l.a.verdict(k) != VerdictOK {
			continue // bad on the whole: collected already
		}
		hs, hd := ls.hca[s*R+rail], ls.hca[d*R+rail]
		if hs < 0 || hd < 0 {
			continue
		}
		var r Result
		if !g.fill(&r.Cell, s, d, rail) {
			continue
		}
		r.Retests = nil
		r.Src, r.Dst, r.Rail = l.m.Nodes[s].Name, l.m.Nodes[d].Name, rail
		normalizeClass(&r.Cell)
		judgeClass(&r, true)
		if r.Verdict == VerdictOK {
			l.a.j.cell(&r, rail, &l.a.st[rail], l.a.rate(s, d, rail), l.a.j.baseAt(k), ends{int32(i), int32(j)})
		}
		if r.Verdict == VerdictOK || r.Verdict == VerdictUntested {
			continue
		}
		if !ls.back && len(ls.bad) == 0 {
			ls.back = r.BackFlow != 0
		}
		from := int32(len(ls.paths))
		var ok bool
		if ls.paths, ok = ls.route(ls.paths, s, d, rail, hs, hd, false, r.Flow); !ok {
			ls.paths = ls.paths[:from]
			ls.noFlow++
			continue
		}
		mid := int32(len(ls.paths))
		if ls.back {
			ls.paths, _ = ls.route(ls.paths, s, d, rail, hs, hd, true, r.BackFlow)
		}
		lc := linkCell{k: k, node: s, peer: d, rail: rail, from: from, mid: mid, to: int32(len(ls.paths)),
			failed: r.Verdict == VerdictFailed, first: r.Verdict}
		ls.bad = append(ls.bad, lc)
		sw = ls.count(&lc, sw, 1)
	}
	ls.badTotal = len(ls.bad)
}

func (ls *linkScan) nodeIndex(name string) (int, bool) {
	ns := ls.l.m.Nodes
	i := sort.Search(len(ns), func(i int) bool { return ns[i].Name >= name })
	return i, i < len(ns) && ns[i].Name == name
}

func (ls *linkScan) span(rail int) *railSpan {
	for i := range ls.l.spans {
		if ls.l.spans[i].rail == rail {
			return &ls.l.spans[i]
		}
	}
	return nil
}
