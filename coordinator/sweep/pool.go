package sweep

import (
	"context"
	"sync"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// Pool runs rounds' pairs on goroutines that live as long as the pool
// (one sweep run on this leader), not one new goroutine per pair: each of
// those grew its stack from 2 KB through the dispatch path, a sixth of the
// leader's dispatch CPU. Whoever creates a pool stops it.
type Pool struct {
	limit int // most goroutines; 0 = as many as a round has pairs
	jobs  chan pairJob
	n     int // goroutines started
	wg    sync.WaitGroup
	// Two rounds' slabs, used in turn: a round's cells are encoded for
	// raft while the next round runs, and its encoding has ended before
	// the one after that starts (committer.submit), so the slab of round r
	// is free again for round r+2. A 1,024-node round's slabs are about 1.7 MB,
	// allocated once a run rather than once a round.
	slabs [2]slab
	turn  int
	// work is the round being run, reused from round to round with its
	// bookkeeping (a slot a pair): rounds run one at a time.
	work roundWork
}

// slab is a round's room: its cells, the latency figures (and their
// codes) they point to, and its lite cells, pair i's at [at[i], at[i+1]).
type slab struct {
	cells []matrix.Cell
	fig   figRoom
	lite  []LiteCell
	// cells past dirty are zero: a round whose cells are nearly all lite
	// clears only what it wrote, not the 1.3 MB of a 1,024-node round's
	// slab.
	dirty int
}

// figRoom is room for cells' latency figures and, in step, their codes.
type figRoom struct {
	lats  []probe.Latency
	codes [][7]uint16
}

// sub is the room's [i, j).
func (f figRoom) sub(i, j int) figRoom { return figRoom{f.lats[i:j:j], f.codes[i:j:j]} }

// pairJob is pair i of a round.
type pairJob struct {
	r *roundWork
	i int
}

type roundWork struct {
	d       Dispatcher
	ctx     context.Context
	id      string
	spec    *Spec
	nodes   *Nodes
	rd      scheduler.Round
	ends    [][2]*nodeRec // pair i's nodes
	phases  *phaseCache
	perPair [][]matrix.Cell // each pair fills its own slot
	perLite [][]LiteCell    // and its lite cells'
	// slab holds every pair's room for its same-rail cells, one allocation
	// a round (room's); a pair that needs more (cross-rail modes) grows its
	// own.
	room *slab
	slab []matrix.Cell
	fig  figRoom    // the slab's figures, in step with it
	lite []LiteCell // room for the lite cells, in step with it
	at   []int      // pair i's room starts at slab[at[i]]
	wg   sync.WaitGroup
}

// NewPool is a pool of at most limit goroutines (0: as many as a round
// has pairs).
func NewPool(limit int) *Pool {
	return &Pool{limit: max(limit, 0), jobs: make(chan pairJob)}
}

// Round tests every pair of one round at once (bounded by the pool's
// limit): the pairs are disjoint, so no HCA is in two tests. Within a pair
// the two directions run one after the other, so bandwidth is never
// shared. It returns the round's cells and lite cells, pair by pair, in
// space the pool reuses: they, and the figures they point to, are valid
// until the second Round call after this one starts (one round committing
// while the next runs).
func (p *Pool) Round(ctx context.Context, d Dispatcher, id string, spec *Spec, nodes *Nodes, rd scheduler.Round) ([]matrix.Cell, []LiteCell) {
	w := &p.work
	w.d, w.ctx, w.id, w.spec, w.nodes, w.rd = d, ctx, id, spec, nodes, rd
	return p.run(w)
}

func (p *Pool) run(w *roundWork) ([]matrix.Cell, []LiteCell) {
	want := len(w.rd.Pairs)
	if p.limit > 0 {
		want = min(want, p.limit)
	}
	for ; p.n < want; p.n++ {
		p.wg.Add(1)
		go p.loop()
	}
	n := len(w.rd.Pairs)
	w.perPair, w.perLite, w.at, w.ends = reuse(w.perPair, n), reuse(w.perLite, n), reuse(w.at, n+1), reuse(w.ends, n)
	w.phases = w.nodes.phaseCache(w.spec)
	for i, pr := range w.rd.Pairs {
		a, b := w.nodes.get(pr.A), w.nodes.get(pr.B)
		w.ends[i] = [2]*nodeRec{a, b}
		w.at[i+1] = w.at[i] + pairRoom(a, b)
	}
	w.room = p.room(w.at[len(w.rd.Pairs)])
	n = w.at[len(w.rd.Pairs)]
	w.slab, w.fig, w.lite = w.room.cells[:n], w.room.fig.sub(0, n), w.room.lite[:n]
	w.wg.Add(len(w.rd.Pairs))
	for i := range w.rd.Pairs {
		p.jobs <- pairJob{w, i}
	}
	w.wg.Wait()
	return w.gather(), w.gatherLite()
}

// reuse is s with length n, zeroed, in s's space when it has room.
func reuse[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// room is the next slab in turn, with room for n cells.
func (p *Pool) room(n int) *slab {
	s := &p.slabs[p.turn]
	p.turn = 1 - p.turn
	if len(s.cells) < n {
		*s = slab{cells: make([]matrix.Cell, n), fig: figRoom{make([]probe.Latency, n), make([][7]uint16, n)}, lite: make([]LiteCell, n)}
	}
	return s
}

// pairRoom is the cells a pair usually yields: both directions of the
// rails its ends share.
func pairRoom(a, b *nodeRec) int { return 2 * min(len(a.eps), len(b.eps)) }

// gather returns the round's cells in pair order. Pairs that stayed in
// their room are moved down within the slab (never past the next pair's
// room, which starts no earlier than where its cells land), so a round
// whose pairs all fit costs no second copy of its cells.
func (w *roundWork) gather() []matrix.Cell {
	n, inPlace, hi := 0, true, w.room.dirty
	for i, cs := range w.perPair {
		n += len(cs)
		inPlace = inPlace && (len(cs) == 0 || w.at[i] < len(w.slab) && &cs[0] == &w.slab[w.at[i]])
		// A pair that outgrew its room filled it first.
		hi = max(hi, w.at[i]+min(len(cs), w.at[i+1]-w.at[i]))
	}
	if !inPlace {
		w.room.dirty = hi
		out := make([]matrix.Cell, 0, n)
		for _, cs := range w.perPair {
			out = append(out, cs...)
		}
		return out
	}
	k := 0
	for _, cs := range w.perPair {
		k += copy(w.slab[k:], cs)
	}
	clear(w.room.cells[k:max(k, hi)]) // no stale pointers past the end
	w.room.dirty = k
	return w.slab[:k:k]
}

// gatherLite is gather for the lite cells. The coordinator's dispatch
// never grows a pair's past its room (it appends one only in place of a
// cell), but a dispatcher may: then they are copied out, before any moves.
func (w *roundWork) gatherLite() []LiteCell {
	for i, ls := range w.perLite {
		if len(ls) > 0 && (w.at[i] >= len(w.lite) || &ls[0] != &w.lite[w.at[i]]) {
			out := make([]LiteCell, 0, len(w.lite))
			for _, ls := range w.perLite {
				out = append(out, ls...)
			}
			return out
		}
	}
	k := 0
	for _, ls := range w.perLite {
		if len(ls) > 0 && &ls[0] != &w.lite[k] {
			copy(w.lite[k:], ls) // copy moves even a slice onto itself
		}
		k += len(ls)
	}
	return w.lite[:k:k]
}

func (p *Pool) loop() {
	defer p.wg.Done()
	var sc pairScratch
	for j := range p.jobs {
		j.r.pair(j.i, &sc)
	}
}

// Stop ends the pool's goroutines; no run may be under way.
func (p *Pool) Stop() {
	close(p.jobs)
	p.wg.Wait()
}

// pair runs both directions of pair i, one after the other (the workers
// see to that within a task), so bandwidth is never shared.
func (w *roundWork) pair(i int, sc *pairScratch) {
	defer w.wg.Done()
	ends := w.ends[i]
	// Room for both directions' same-rail cells, in the round's slab;
	// cross-rail modes outgrow it and append into their own.
	cells := w.slab[w.at[i]:w.at[i]:w.at[i+1]]
	lite := w.lite[w.at[i]:w.at[i]:w.at[i+1]]
	var steer []scheduler.RailFlow
	if i < len(w.rd.Steer) {
		steer = w.rd.Steer[i]
	}
	w.perPair[i] = pairPhases(w.ctx, w.d, sc, cells, w.fig.sub(w.at[i], w.at[i+1]), &lite, w.id, w.rd.Index, w.spec, w.phases, ends[0], ends[1], steer)
	w.perLite[i] = lite
}
