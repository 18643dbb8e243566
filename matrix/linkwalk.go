package matrix

import "sort"

// The cells LinkCells looks at. On an analysed (compact) matrix it reaches
// them through the rail spans, so a 4,096 x 8 sweep's 134 M cells cost
// only those whose ends can route over the cable; a materialised matrix
// is small enough to be read whole.

// cellShares is a cell's candidate shares: of its data path (src → dst)
// and its return path over the cable.
type cellShares struct{ data, ret linkShare }

// host walks the row and column of HCA h: every test from it crosses its
// cable outwards and its return path inwards, and the reverse for tests
// to it, whatever the flows.
func (w *linkWalk) host(h int, hcaIsA bool) {
	out, in := linkShare{ab: 1}, linkShare{ba: 1}
	if !hcaIsA {
		out, in = in, out
	}
	x := w.t.HCAs[h]
	n, ok := w.nodeIndex(x.Node)
	if !ok || x.Rail < 0 || x.Rail >= w.m.Rails {
		return
	}
	rowShares, colShares := cellShares{out, in}, cellShares{in, out}
	if w.m.a == nil {
		w.eachCell(func(s, d, rail int) (cellShares, bool) {
			switch {
			case rail != x.Rail:
				return cellShares{}, false
			case s == n:
				return rowShares, true
			case d == n:
				return colShares, true
			}
			return cellShares{}, false
		})
		return
	}
	sp := &w.m.a.spans[x.Rail]
	p := sort.SearchInts(sp.members, n)
	if p == len(sp.members) || sp.members[p] != n {
		return
	}
	for j, d := range sp.members {
		if j%4096 == 0 && w.ctx.Err() != nil {
			return
		}
		if j != p {
			w.visit(sp.at(p, j), n, d, x.Rail, ends{int32(p), int32(j)}, rowShares)
			w.visit(sp.at(j, p), d, n, x.Rail, ends{int32(j), int32(p)}, colShares)
		}
	}
}

// pairs walks the cells between the leaf pairs of ps (leafPairShares): a
// cell from leaf x to leaf y may cross the cable on its data path when
// (x, y) is in ps, and on its return path when (y, x) is.
func (w *linkWalk) pairs(ps map[[2]int32]linkShare) {
	if len(ps) == 0 {
		return
	}
	cand := make(map[[2]int32]cellShares, 2*len(ps))
	for k, sh := range ps {
		c := cand[k]
		c.data = sh
		cand[k] = c
		back := [2]int32{k[1], k[0]}
		c = cand[back]
		c.ret = sh
		cand[back] = c
	}
	R := w.m.Rails
	leaf := func(n, rail int) int32 {
		if h := w.hca[n*R+rail]; h >= 0 {
			return int32(w.t.LeafIndex(w.t.LeafOf(int(h))))
		}
		return -1
	}
	if w.m.a == nil {
		w.eachCell(func(s, d, rail int) (cellShares, bool) {
			c, ok := cand[[2]int32{leaf(s, rail), leaf(d, rail)}]
			return c, ok
		})
		return
	}
	wanted := map[int32]bool{}
	for k := range cand {
		wanted[k[0]] = true
	}
	for si := range w.m.a.spans {
		sp := &w.m.a.spans[si]
		byLeaf := map[int32][]int32{} // leaf → positions on the span
		for i, n := range sp.members {
			if l := leaf(n, sp.rail); l >= 0 && wanted[l] {
				byLeaf[l] = append(byLeaf[l], int32(i))
			}
		}
		for k, c := range cand {
			if w.ctx.Err() != nil {
				return
			}
			for _, i := range byLeaf[k[0]] {
				for _, j := range byLeaf[k[1]] {
					w.visit(sp.at(int(i), int(j)), sp.members[i], sp.members[j], sp.rail, ends{i, j}, c)
				}
			}
		}
	}
}

// eachCell visits the cells of a materialised matrix that shares picks.
func (w *linkWalk) eachCell(shares func(s, d, rail int) (cellShares, bool)) {
	for k := range w.m.Cells {
		if k%4096 == 0 && w.ctx.Err() != nil {
			return
		}
		c := &w.m.Cells[k]
		s, okS := w.nodeIndex(c.Src)
		d, okD := w.nodeIndex(c.Dst)
		if !okS || !okD || c.Rail < 0 || c.Rail >= w.m.Rails {
			continue
		}
		if sh, ok := shares(s, d, c.Rail); ok {
			w.visit(k, s, d, c.Rail, noEnds, sh)
		}
	}
}

// visit decides whether cell k (nodes s → d on rail) crossed the cable,
// counts it and keeps it if it is among the first.
func (w *linkWalk) visit(k, s, d, rail int, e ends, sh cellShares) {
	var c Cell
	var v Verdict
	if a := w.m.a; a != nil {
		if v = a.verdict(k); v != VerdictUntested {
			a.g.fill(&c, s, d, rail)
		}
	} else {
		v, c = w.m.Cells[k].Verdict, w.m.Cells[k].Cell
	}
	if v == VerdictUntested {
		return // no test ran: no path
	}
	R := w.m.Rails
	hs, hd := int(w.hca[s*R+rail]), int(w.hca[d*R+rail])
	if hs < 0 || hd < 0 {
		return
	}
	data, du := w.way(sh.data, hs, hd, c.Flow)
	ret, ru := w.way(sh.ret, hd, hs, c.BackFlow)
	if data == "" && ret == "" {
		if du || ru {
			w.out.Unknown++
		}
		return
	}
	w.add(through{k: k, data: data, ret: ret, path: w.pathVerdict(k, v, &c, s, d, rail, e)})
}

// pathVerdict is the verdict of the cell's first measurement, the one its
// flows belong to: its verdict unless retests changed it.
func (w *linkWalk) pathVerdict(k int, v Verdict, c *Cell, s, d, rail int, e ends) Verdict {
	a := w.m.a
	if a == nil || len(c.Retests) == 0 {
		return v
	}
	r := Result{Cell: *c}
	r.Retests = nil
	normalizeClass(&r.Cell)
	judgeClass(&r, true)
	if r.Verdict == VerdictOK {
		a.j.cell(&r, rail, &a.st[rail], a.rate(s, d, rail), a.j.baseAt(k), e)
	}
	if r.Verdict == VerdictUntested {
		return v
	}
	return r.Verdict
}

func (w *linkWalk) nodeIndex(name string) (int, bool) {
	ns := w.m.Nodes
	i := sort.Search(len(ns), func(i int) bool { return ns[i].Name >= name })
	return i, i < len(ns) && ns[i].Name == name
}
