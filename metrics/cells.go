package metrics

import (
	"cmp"
	"context"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// cellWalk gathers what the result metrics need per cell in one pass: a
// compact matrix's figures through WalkFigures (no cell is materialised,
// no reason regenerated), a materialised one's Cells.
type cellWalk struct {
	m       *matrix.Matrix
	classes map[probe.Class]int
	hcas    []hcaTally
	hcaAt   []int // node*Rails+rail → 1 + index in hcas; 0 = not seen yet
	k       int   // worst pairs kept
	lat, bw worst
}

// hcaTally rolls cells up per (node, rail): an HCA is an endpoint of every
// cell it initiates or answers.
type hcaTally struct {
	node, device string
	rail         int
	cells, bad   int
}

// pairFigure is one cell's worst-pair candidate.
type pairFigure struct {
	rail          int
	src, dst      string
	p50, p99, bw  float64
	hasLat, hasBW bool
}

func newCellWalk(m *matrix.Matrix, k int) *cellWalk {
	w := &cellWalk{m: m, classes: map[probe.Class]int{}, k: k, hcaAt: make([]int, len(m.Nodes)*m.Rails),
		lat: worst{by: byLatency}, bw: worst{by: byBandwidth, narrow: true}}
	for _, cl := range failureClasses {
		w.classes[cl] = 0
	}
	return w
}

// splitCells is the fewest cells a compact walk splits over the cores for
// (a 4,096 x 8 sweep's 134 M cells took a scrape 45 s on one), and
// splitParts, when set, the parts instead of one a core. Variables for
// tests.
var splitCells, splitParts = 1 << 16, 0

// walkSources is how many sources a part of a compact walk takes between
// two looks at its context: about 30 ms at 4,096 x 8.
const walkSources = 16

// walk reads every cell; ctx ending stops a compact walk within a few
// sources a part, with ctx's error.
func (w *cellWalk) walk(ctx context.Context) error {
	m := w.m
	if m.Compact() {
		n := m.NumCells()
		parts := 1
		if n >= splitCells {
			parts = cmp.Or(splitParts, runtime.GOMAXPROCS(0))
		}
		ws := make([]*cellWalk, parts)
		var wg sync.WaitGroup
		// By source: the order the coordinator's store keeps cells in.
		nodes := len(m.Nodes)
		for i := range ws {
			ws[i] = newCellWalk(m, w.k)
			wg.Go(func() {
				for lo, hi := nodes*i/parts, nodes*(i+1)/parts; lo < hi && ctx.Err() == nil; lo += walkSources {
					m.WalkFiguresFrom(lo, min(lo+walkSources, hi), func(k, rail, src, dst int, r *matrix.Result) {
						ws[i].cell(k, rail, src, dst, r, "", "")
					})
				}
			})
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, p := range ws {
			w.merge(p)
		}
		return nil
	}
	pos := make(map[string]int, len(m.Nodes))
	for i, n := range m.Nodes {
		pos[n.Name] = i
	}
	for k := range m.Cells {
		c := &m.Cells[k]
		s, okS := pos[c.Src]
		d, okD := pos[c.Dst]
		if okS && okD && c.Rail >= 0 && c.Rail < m.Rails {
			w.cell(k, c.Rail, s, d, c, c.SrcDevice, c.DstDevice)
		}
	}
	return nil
}

// cell takes cell k; srcDev and dstDev are its devices when known ("" in a
// compact walk, which reads them only when the inventory lacks them).
func (w *cellWalk) cell(k, rail, src, dst int, r *matrix.Result, srcDev, dstDev string) {
	if cl := r.Class; cl != "" && cl != probe.ClassOK {
		w.classes[cl]++
	}
	isBad := r.Verdict == matrix.VerdictFailed || r.Verdict == matrix.VerdictSlowLatency ||
		r.Verdict == matrix.VerdictLowBandwidth
	w.touch(k, src, rail, srcDev, true, isBad)
	w.touch(k, dst, rail, dstDev, false, isBad)
	w.keepPair(rail, src, dst, r)
}

func (w *cellWalk) touch(k, node, rail int, device string, isSrc, isBad bool) {
	slot := node*w.m.Rails + rail
	i := w.hcaAt[slot] - 1
	if i < 0 {
		i = len(w.hcas)
		w.hcaAt[slot] = i + 1
		// The inventory names the HCA even for an untested cell, which
		// carries no device.
		n := &w.m.Nodes[node]
		dev := ""
		if rail < len(n.Ports) {
			dev = n.Ports[rail].Device
		}
		w.hcas = append(w.hcas, hcaTally{node: n.Name, rail: rail, device: dev})
	}
	h := &w.hcas[i]
	if h.device == "" && device == "" && w.m.Compact() {
		// Only for an HCA the inventory does not list: its cells say.
		c := w.m.CellAt(k)
		device = c.DstDevice
		if isSrc {
			device = c.SrcDevice
		}
	}
	if h.device == "" {
		h.device = device
	}
	h.cells++
	if isBad {
		h.bad++
	}
}

// merge adds p, a walk of other cells of the same matrix, to w.
func (w *cellWalk) merge(p *cellWalk) {
	for cl, n := range p.classes {
		w.classes[cl] += n
	}
	for slot, at := range p.hcaAt {
		if at == 0 {
			continue
		}
		h := &p.hcas[at-1]
		i := w.hcaAt[slot] - 1
		if i < 0 {
			w.hcaAt[slot] = len(w.hcas) + 1
			w.hcas = append(w.hcas, *h)
			continue
		}
		x := &w.hcas[i]
		x.cells += h.cells
		x.bad += h.bad
		if x.device == "" {
			x.device = h.device
		}
	}
	for _, c := range p.lat.xs {
		w.lat.offer(c, w.k)
	}
	for _, c := range p.bw.xs {
		w.bw.offer(c, w.k)
	}
}

// keepPair offers a cell to the worst pairs: the k slowest by p50 (with
// their p99) and the k narrowest by bandwidth.
func (w *cellWalk) keepPair(rail, src, dst int, r *matrix.Result) {
	if w.k <= 0 {
		return
	}
	c := pairFigure{rail: rail, hasLat: measuredLatency(r), hasBW: r.Bandwidth != nil && r.Bandwidth.Gbps > 0}
	if !c.hasLat && !c.hasBW {
		return
	}
	c.src, c.dst = w.m.Nodes[src].Name, w.m.Nodes[dst].Name
	if c.hasLat {
		c.p50, c.p99 = r.Latency.P50Ns, r.Latency.P99Ns
		w.lat.offer(c, w.k)
	}
	if c.hasBW {
		c.bw = r.Bandwidth.Gbps
		w.bw.offer(c, w.k)
	}
}

// measuredLatency: a latency of samples, or with a positive p50 when the
// count is unknown: a compact matrix's figures may not carry it
// (matrix.Figures.Samples is 0 from a FigureSource that does not keep
// it), and a latency of no samples is all zeros (probe.Summarize).
func measuredLatency(r *matrix.Result) bool {
	l := r.Latency
	return l != nil && (l.Samples > 0 || l.P50Ns > 0)
}

// worst keeps the first k pair figures in by's order (worst first) of
// those offered. Candidates are cut to k whenever they pass a few k, so
// millions of cells hold a few hundred; after a cut, a candidate that
// orders after the k-th kept cannot be among the k and is turned away
// with one comparison. Sorting every few k candidates instead was three
// quarters of a scrape after a 2,048-node sweep (16 of 22 CPU-s).
type worst struct {
	xs  []pairFigure
	by  func(a, b pairFigure) int
	cut pairFigure
	has bool // cut is set
	// narrow: by orders by bandwidth, narrowest first (else by p50,
	// slowest first). A candidate clearly better than the cut is turned
	// away on the figure alone; only a tie needs by's names.
	narrow bool
}

func (t *worst) offer(c pairFigure, k int) {
	if t.has {
		if t.narrow && c.bw > t.cut.bw || !t.narrow && c.p50 < t.cut.p50 || t.by(c, t.cut) >= 0 {
			return
		}
	}
	t.xs = append(t.xs, c)
	if len(t.xs) >= 4*k+64 {
		slices.SortFunc(t.xs, t.by)
		t.xs = t.xs[:k]
		t.cut, t.has = t.xs[k-1], true
	}
}

// Ties break by rail, src, dst so the exported set is stable from scrape
// to scrape.
func pairOrder(a, b pairFigure) int {
	return cmp.Or(cmp.Compare(a.rail, b.rail), cmp.Compare(a.src, b.src), cmp.Compare(a.dst, b.dst))
}

func byLatency(a, b pairFigure) int { return cmp.Or(cmp.Compare(b.p50, a.p50), pairOrder(a, b)) }

func byBandwidth(a, b pairFigure) int { return cmp.Or(cmp.Compare(a.bw, b.bw), pairOrder(a, b)) }

func (w *cellWalk) worstPairs(add adder) {
	if w.k <= 0 {
		return
	}
	lat, bw := w.lat.xs, w.bw.xs
	slices.SortFunc(lat, byLatency)
	slices.SortFunc(bw, byBandwidth)
	for _, c := range lat[:min(w.k, len(lat))] {
		rail := strconv.Itoa(c.rail)
		add(defPairLatency, c.p50/1e9, c.src, c.dst, rail)
		add(defPairLatencyP99, c.p99/1e9, c.src, c.dst, rail)
	}
	for _, c := range bw[:min(w.k, len(bw))] {
		add(defPairBandwidth, gbpsToBytes(c.bw), c.src, c.dst, strconv.Itoa(c.rail))
	}
}
