package matrix

import (
	"math"
	"sort"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// The analysis reads every same-rail cell of its input once. Per rail, the
// first pass reads each cell's class and figures, gives it its class
// verdict and gathers the population statistics; the figures wait in
// memory (a rail's p99 and Gb/s, every cell's p50) for the second pass,
// which runs the rules and tallies the rail and both nodes of the cell.
// The node medians are taken last, from the p50s. Each cell is read once,
// not once per use (statistics, rules, each end's rollup): reading the
// input is the largest part of the analysis (README.md).

// railFigs are one rail's figures between the two passes, by position in
// the rail's span; NaN = none (a valid figure is never NaN).
type railFigs struct {
	p99, g []float64
	big    []bool
}

func (f *railFigs) reset(n int) {
	if cap(f.p99) < n {
		f.p99, f.g, f.big = make([]float64, n), make([]float64, n), make([]bool, n)
	}
	f.p99, f.g, f.big = f.p99[:n], f.g[:n], f.big[:n]
}

const verdictMask = 1<<verdictBits - 1

// judgeRails gives every same-rail cell its verdict and returns the rail
// and node rollups. Both passes over a rail run on every core, a stretch
// of cells at a time (parallel.go).
func (a *analysis) judgeRails() (rails, nodes []Rollup) {
	w := a.workers()
	p50s := newP50Column(len(a.cells), a.g.p50Table()) // per cell; 2.25 or 8 bytes a cell while judging
	tallies := make([][]rollTally, w)                  // per goroutine, per node
	peekers := make([]*peeker, w)
	for i := range w {
		tallies[i], peekers[i] = make([]rollTally, len(a.ns)), a.peeker()
	}
	rails = make([]Rollup, len(a.spans))
	// The scratch is sized for the largest rail up front: grown by append,
	// its outgrown copies would be garbage the collector lets pile up to
	// about twice the live heap.
	most := 0
	for si := range a.spans {
		m := len(a.spans[si].members)
		most = max(most, m*(m-1))
	}
	var rf railFigs
	rf.reset(most)
	a.j.reserve(most)
	// The rail's p50s, for its median: all of them in a plain column, only
	// those without a code in a coded one (p50Column.median).
	var scratch []float64
	if p50s.f64 != nil {
		scratch = make([]float64, 0, most)
	}
	var rates []float64
	for si := range a.spans {
		sp := &a.spans[si]
		m := len(sp.members)
		rf.reset(m * (m - 1))
		a.j.begin()
		sample := newSpreadSample(m * (m - 1))
		parts := a.stretches(sp, sample.stride)
		each(w, len(parts), func(wi, i int) {
			a.readStretch(sp, &parts[i], peekers[wi], p50s, &rf)
		})
		for i := range parts {
			a.j.join(&parts[i].pop)
			sample.join(&parts[i].sample)
		}
		st := a.j.done()
		st.noise = sample.done()
		if a.j.th.regimeOf(st.noise.p50) != regimeQuiet || a.j.th.regimeOf(st.noise.gbps) != regimeQuiet {
			st.agg = a.aggregate(sp, &st, sample, &rf, p50s)
		}
		a.cv[sp.rail] = st.noise
		a.st[sp.rail] = st

		rates = rates[:0]
		for _, n := range sp.members {
			rates = append(rates, lineRate(a.ns[n], sp.rail))
		}
		each(w, len(parts), func(wi, i int) {
			a.judgeStretch(si, &parts[i], &st, rates, &rf, p50s, tallies[wi])
		})
		var rt rollTally
		for i := range parts {
			rt.merge(&parts[i].rail)
		}
		rails[si] = rt.rollup(railKey(sp.rail), p50s.median(&scratch, sp.start, sp.end()))
	}
	nt := tallies[0]
	for _, t := range tallies[1:] {
		for n := range nt {
			nt[n].merge(&t[n])
		}
	}
	return rails, a.nodeMedians(nt, p50s)
}

// readStretch is the first pass over one stretch: each cell's class
// verdict, figures and p50, and the ok cells' population figures.
func (a *analysis) readStretch(sp *railSpan, pt *stretch, p *peeker, p50s *p50Column, rf *railFigs) {
	// Gathered on the stack: the stretches sit side by side, and two
	// goroutines adding to neighbours would share their cache lines.
	var f figs
	pop, sample := pt.pop, pt.sample
	for c := pt.cells(sp); c.k < pt.k1; c.next() {
		b := p.figures(sp.members[c.i], sp.members[c.j], sp.rail, &f)
		a.cells[c.k] = b
		o := c.k - sp.start
		p50s.set(c.k, &f)
		rf.p99[o], rf.g[o], rf.big[o] = orNaN(f.p99, f.hasT), orNaN(f.g, f.hasG), f.big
		if b&verdictMask == 0 { // ok
			a.j.gather(&pop, &f)
			sample.add(o, &f, ends{int32(c.i), int32(c.j)})
		}
	}
	pt.pop, pt.sample = pop, sample
}

// judgeStretch is the second pass over one stretch: the rules on each ok
// cell, and the rail's and both nodes' tallies.
func (a *analysis) judgeStretch(si int, pt *stretch, st *railStats, rates []float64, rf *railFigs, p50s *p50Column, nt []rollTally) {
	sp := &a.spans[si]
	var rt rollTally // on the stack, as in readStretch
	for c := pt.cells(sp); c.k < pt.k1; c.next() {
		k, i, j := c.k, c.i, c.j
		o := k - sp.start
		v := a.cells[k] & verdictMask
		if v == 0 { // ok: the rules may still find it slow or short of bandwidth
			f := figs{p50: p50s.at(k), p99: rf.p99[o], g: rf.g[o], big: rf.big[o]}
			f.hasP, f.hasT, f.hasG = !math.IsNaN(f.p50), !math.IsNaN(f.p99), !math.IsNaN(f.g)
			if nv := a.j.rules(f, VerdictOK, sp.rail, st, portRate(rates[i], rates[j]), a.j.baseAt(k), ends{int32(i), int32(j)}, nil); nv != VerdictOK {
				v = verdictIndex(nv)
				a.cells[k] = a.cells[k]&^verdictMask | v
			}
		}
		g := rf.g[o]
		rt.add(v, g, 0)
		// The key settles ties between equal Gb/s in a node's rollup
		// (a 0 and a -0): rail, the peer's position, the row before the
		// column, whichever stretch the cell is in.
		nt[sp.members[i]].add(v, g, ((si*len(a.ns))+j)*2)
		nt[sp.members[j]].add(v, g, ((si*len(a.ns))+i)*2+1)
	}
	pt.rail = rt
}

// nodeMedians finishes the node rollups with the median of each node's
// p50s, its row and its column on every rail. A column is strided through
// the grid (a rail's row apart), so nodes are taken a block at a time and
// their columns read row by row, in memory order: at 1,024 x 8 that is
// several times faster than chasing each column, for a few MB of lists.
func (a *analysis) nodeMedians(nt []rollTally, p50s *p50Column) []Rollup {
	nodes := make([]Rollup, len(a.ns))
	perNode := 0
	for si := range a.spans {
		perNode += 2 * max(len(a.spans[si].members)-1, 0)
	}
	// About a million p50s in lists at once, shared by the goroutines.
	w := a.workers()
	block := max(1, min(len(a.ns), (1<<20)/w/max(perNode, 1)))
	lists := make([][][]float64, w) // per goroutine, per node of its block
	for i := range lists {
		lists[i] = make([][]float64, block)
	}
	each(w, (len(a.ns)+block-1)/block, func(wi, bi int) {
		n0 := bi * block
		a.blockMedians(nodes, nt, p50s, lists[wi], n0, min(n0+block, len(a.ns)))
	})
	return nodes
}

// blockMedians finishes the rollups of nodes n0..n1-1.
func (a *analysis) blockMedians(nodes []Rollup, nt []rollTally, p50s *p50Column, lists [][]float64, n0, n1 int) {
	for b := range lists {
		lists[b] = lists[b][:0]
	}
	for si := range a.spans {
		sp := &a.spans[si]
		m1 := len(sp.members) - 1
		// The block's members on this rail are a run of positions,
		// members being in node order.
		i0, i1 := sort.SearchInts(sp.members, n0), sort.SearchInts(sp.members, n1)
		for i := i0; i < i1; i++ {
			row := sp.start + i*m1
			b := sp.members[i] - n0
			lists[b] = p50s.appendValid(lists[b], row, row+m1)
		}
		for j := range sp.members {
			row := sp.start + j*m1 // j's row, diagonal skipped
			for i := i0; i < i1; i++ {
				col := i
				switch {
				case i == j:
					continue
				case i > j:
					col--
				}
				if v := p50s.at(row + col); !math.IsNaN(v) {
					b := sp.members[i] - n0
					lists[b] = append(lists[b], v)
				}
			}
		}
	}
	for n := n0; n < n1; n++ {
		nodes[n] = nt[n].rollup(a.ns[n].Name, median(lists[n-n0]))
	}
}

func orNaN(v float64, ok bool) float64 {
	if ok {
		return v
	}
	return math.NaN()
}

func appendValid(dst, xs []float64) []float64 {
	for _, v := range xs {
		if !math.IsNaN(v) {
			dst = append(dst, v)
		}
	}
	return dst
}

// figures reads cell (s, d, rail) for the first pass into *f and returns
// its cell byte: the class verdict (ok, failed or untested) and the judged
// class. A FigureSource's plain cells are read without building a Result.
func (p *peeker) figures(s, d, rail int, f *figs) uint8 {
	g := p.g
	if g.figs != nil && (len(g.cells) == 0 || rail >= g.idx.rails || g.idx.find(s, d, rail) < 0) {
		in := &p.f
		if !g.figs.Figures(in, g.orig[s], g.orig[d], rail) {
			*f = figs{big: true}
			return packCell(VerdictUntested, "")
		}
		if !in.Whole {
			*f = figs{big: true}
			if in.Latency {
				f.p50, f.hasP = in.P50Ns, validLatency(in.P50Ns)
				f.coded, f.code = in.P50Coded, in.P50Code
				f.p99, f.hasT = in.P99Ns, validLatency(in.P99Ns)
			}
			if in.Bandwidth {
				f.g, f.hasG = in.Gbps, in.Gbps >= 0 && !math.IsInf(in.Gbps, 0) && !math.IsNaN(in.Gbps)
				f.big = !(in.MsgRate > 0) || in.Gbps*1e9/8/in.MsgRate >= minLineRateMessage
			}
			cls := in.Class
			if cls == "" && (in.Latency || in.Bandwidth) {
				cls = probe.ClassOK
			}
			return packCell(classVerdict(cls, true), cls)
		}
	}
	r := p.peek(s, d, rail)
	*f = figsOf(r)
	return packCell(r.Verdict, r.Class)
}

func validLatency(p float64) bool { return p > 0 && !math.IsInf(p, 0) && !math.IsNaN(p) }
