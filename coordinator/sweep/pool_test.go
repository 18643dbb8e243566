package sweep

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// gather keeps pair order whether every pair stayed in its slab room
// (moved down in place, gaps closed, nothing stale past the end) or one
// outgrew it (copied out).
func TestRoundWorkGather(t *testing.T) {
	cell := func(s string) matrix.Cell { return matrix.Cell{Src: s} }
	srcs := func(cs []matrix.Cell) (out []string) {
		for _, c := range cs {
			out = append(out, c.Src)
		}
		return out
	}
	fill := func(w *roundWork, counts ...int) *roundWork {
		for i, n := range counts {
			cs := w.slab[w.at[i]:w.at[i]:w.at[i+1]]
			for j := 0; j < n; j++ {
				cs = append(cs, cell(string(rune('a'+i))+string(rune('0'+j))))
			}
			w.perPair[i] = cs
		}
		return w
	}
	setup := func() *roundWork {
		sl := &slab{cells: make([]matrix.Cell, 9)}
		w := &roundWork{at: []int{0, 3, 6, 9}, room: sl, slab: sl.cells, perPair: make([][]matrix.Cell, 3)}
		for i, n := range []int{2, 0, 3} { // pair 0 short, pair 1 empty, pair 2 full
			cs := w.slab[w.at[i]:w.at[i]:w.at[i+1]]
			for j := 0; j < n; j++ {
				cs = append(cs, cell(string(rune('a'+i))+string(rune('0'+j))))
			}
			w.perPair[i] = cs
		}
		return w
	}
	want := []string{"a0", "a1", "c0", "c1", "c2"}

	w := setup()
	got := w.gather()
	if !reflect.DeepEqual(srcs(got), want) || &got[0] != &w.slab[0] {
		t.Fatalf("in place: %v (in the slab: %v), want %v", srcs(got), &got[0] == &w.slab[0], want)
	}
	for _, c := range w.slab[len(got):] {
		if c.Src != "" {
			t.Fatalf("stale cell %q left past the end", c.Src)
		}
	}
	// The slab's next round has fewer cells (the rest went lite): what
	// the last one left past them is cleared too.
	got = fill(w, 1, 0, 0).gather()
	if !reflect.DeepEqual(srcs(got), []string{"a0"}) {
		t.Fatalf("second round: %v", srcs(got))
	}
	for i, c := range w.slab {
		if i > 0 && c.Src != "" {
			t.Fatalf("second round: stale cell %q at %d", c.Src, i)
		}
	}

	w = setup()
	w.perPair[1] = append(w.perPair[1], cell("b0"), cell("b1"), cell("b2"), cell("b3")) // outgrows its 3
	got = w.gather()
	want = []string{"a0", "a1", "b0", "b1", "b2", "b3", "c0", "c1", "c2"}
	if !reflect.DeepEqual(srcs(got), want) {
		t.Fatalf("copied out: %v, want %v", srcs(got), want)
	}
	// A pair that outgrows its room a cell at a time fills it first; the
	// slab's next round clears what it left there too.
	w = setup()
	w.gather()
	w = fill(w, 0, 0, 0)
	for _, s := range []string{"c0", "c1", "c2", "c3"} {
		w.perPair[2] = append(w.perPair[2], cell(s))
	}
	if got = w.gather(); !reflect.DeepEqual(srcs(got), []string{"c0", "c1", "c2", "c3"}) {
		t.Fatalf("grown last pair: %v", srcs(got))
	}
	fill(w, 1, 0, 0).gather()
	for i, c := range w.slab {
		if i > 0 && c.Src != "" {
			t.Fatalf("after a pair outgrew its room: stale cell %q at %d", c.Src, i)
		}
	}
}

// gatherLite closes the gaps between the pairs' lite cells in place, or
// copies them out when one outgrew its room.
func TestRoundWorkGatherLite(t *testing.T) {
	w := &roundWork{at: []int{0, 3, 6, 9}, lite: make([]LiteCell, 9), perLite: make([][]LiteCell, 3)}
	for i, n := range []int{2, 0, 3} {
		ls := w.lite[w.at[i]:w.at[i]:w.at[i+1]]
		for j := range n {
			ls = append(ls, LiteCell{Src: int32(i), Dst: int32(j)})
		}
		w.perLite[i] = ls
	}
	want := []LiteCell{{Src: 0, Dst: 0}, {Src: 0, Dst: 1}, {Src: 2, Dst: 0}, {Src: 2, Dst: 1}, {Src: 2, Dst: 2}}
	if got := w.gatherLite(); !reflect.DeepEqual(got, want) || &got[0] != &w.lite[0] {
		t.Fatalf("in place: %v, want %v", got, want)
	}
	w.perLite[1] = append(w.perLite[1][:0:0], LiteCell{Src: 1})
	w.perLite[0], w.perLite[2] = w.lite[0:2:3], w.lite[6:9]
	copy(w.perLite[0], want[:2])
	copy(w.perLite[2], want[2:])
	want = []LiteCell{want[0], want[1], {Src: 1}, want[2], want[3], want[4]}
	if got := w.gatherLite(); !reflect.DeepEqual(got, want) {
		t.Fatalf("copied out: %v, want %v", got, want)
	}
	// A later pair outgrew its room, after pairs that would move down in
	// place: nothing is moved before the copy out.
	w.perLite[0] = append(w.lite[0:0:3], LiteCell{Src: 0}, LiteCell{Src: 0, Dst: 1})
	w.perLite[1] = append(w.lite[3:3:6], LiteCell{Src: 1, Dst: 0}, LiteCell{Src: 1, Dst: 1}, LiteCell{Src: 1, Dst: 2})
	w.perLite[2] = []LiteCell{{Src: 2}}
	want = []LiteCell{{Src: 0}, {Src: 0, Dst: 1}, {Src: 1, Dst: 0}, {Src: 1, Dst: 1}, {Src: 1, Dst: 2}, {Src: 2}}
	if got := w.gatherLite(); !reflect.DeepEqual(got, want) {
		t.Fatalf("grown after pairs that fit: %v, want %v", got, want)
	}
}

// figureDispatch answers every rail ok, keeping each cell's figures (its
// round in Samples) and codes (the round in each) in the room the engine
// hands it when there is one.
type figureDispatch struct{}

func (figureDispatch) Phase(_ context.Context, out []matrix.Cell, t Task) []matrix.Cell {
	j := 0
	for k, half := range [2][]probe.RailPair{t.Rails, t.Reverse} {
		src, dst := t.Src.Name, t.Dst.Name
		if k == 1 {
			src, dst = dst, src
		}
		for _, rp := range half {
			lat, codes := new(probe.Latency), new([7]uint16)
			if j < len(t.Figures) {
				lat, codes = &t.Figures[j], &t.Codes[j]
			}
			j++
			*lat = probe.Latency{Samples: t.Round + 1}
			for k := range codes {
				codes[k] = uint16(t.Round + 1)
			}
			c := CellFor(src, dst, t.Round, rp)
			c.Class, c.Latency, c.LatencyCodes = probe.ClassOK, lat, codes
			out = append(out, c)
		}
	}
	return out
}

// A round's cells and their figures stay as they were while the next
// round runs (its commit overlaps that round), and their space is reused
// by the round after: a pool allocates its slabs once.
func TestPoolRoundsReuseTheirSlabs(t *testing.T) {
	h := newHarness(t, 6, 2, Spec{RailMode: "same"})
	rounds, err := PlanRounds(h.rec.Spec, h.rec.Info.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	nodes := NewNodes(h.rec.Nodes)
	p := NewPool(0)
	defer p.Stop()
	run := func(i int) []matrix.Cell {
		cells, _ := p.Round(context.Background(), figureDispatch{}, "s", &h.rec.Spec, nodes, rounds[i])
		return cells
	}
	first := run(0)
	kept := make([]matrix.Cell, len(first))
	copy(kept, first)
	figs := make([]probe.Latency, len(first))
	for i := range first {
		figs[i] = *first[i].Latency
	}
	second := run(1)
	for i := range first {
		if !reflect.DeepEqual(first[i], kept[i]) || *first[i].Latency != figs[i] || figs[i].Samples != 1 || first[i].LatencyCodes[6] != 1 {
			t.Fatalf("round 0's cell %d changed while round 1 ran: %+v %+v %v", i, first[i], *first[i].Latency, *first[i].LatencyCodes)
		}
	}
	third := run(2)
	if len(first) != 12 || len(third) != 12 || &third[0] != &first[0] || &second[0] == &first[0] {
		t.Fatalf("%d, %d cells; round 2 in round 0's slab: %v; round 1 in it too: %v", len(first), len(third), &third[0] == &first[0], &second[0] == &first[0])
	}
	if third[0].Latency.Samples != 3 || third[0].LatencyCodes[0] != 3 || third[0].LatencyCodes != first[0].LatencyCodes {
		t.Fatalf("round 2's figures %+v, codes %v", *third[0].Latency, *third[0].LatencyCodes)
	}
}

// A port its worker marked unusable is not tested: both directions of
// its rail get cells that say why (port-down for a port that is down,
// skipped otherwise), the other rails go to the workers, and a pair with a
// node the sweep does not know yields nothing.
func TestPoolSkipsUnusablePorts(t *testing.T) {
	h := newHarness(t, 2, 3, Spec{RailMode: "same"})
	a, b := &h.rec.Nodes[0], &h.rec.Nodes[1]
	a.Ports[1].Usable, a.Ports[1].State, a.Ports[1].UnusableWhy = false, "DOWN", "no carrier"
	b.Ports[2].Usable, b.Ports[2].UnusableWhy = false, "no GID"
	p := NewPool(0)
	defer p.Stop()
	rd := scheduler.Round{Index: 0, Pairs: []scheduler.Pair{{A: "n0", B: "n1"}, {A: "n0", B: "gone"}}}
	cells, _ := p.Round(context.Background(), figureDispatch{}, "s", &h.rec.Spec, NewNodes(h.rec.Nodes), rd)
	got := map[string]string{}
	for _, c := range cells {
		why := string(c.Class)
		if c.Error != nil {
			why += ": " + c.Error.Cause
		}
		got[fmt.Sprintf("%s>%s/%d", c.Src, c.Dst, c.Rail)] = why
	}
	want := map[string]string{
		"n0>n1/0": "ok", "n1>n0/0": "ok",
		"n0>n1/1": "port-down: not tested: n0 mlx5_1 port 1 is unusable: no carrier",
		"n1>n0/1": "port-down: not tested: n0 mlx5_1 port 1 is unusable: no carrier",
		"n0>n1/2": "skipped: not tested: n1 mlx5_2 port 1 is unusable: no GID",
		"n1>n0/2": "skipped: not tested: n1 mlx5_2 port 1 is unusable: no GID",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("cells:\n got %v\nwant %v", got, want)
	}
}

// indexDispatch checks each task's ends' positions in the sweep's nodes
// and counts the tasks that n1 starts.
type indexDispatch struct {
	t       *testing.T
	nodes   []matrix.Node
	fromN1  *atomic.Int64
	checked *atomic.Int64
}

func (d indexDispatch) Phase(ctx context.Context, out []matrix.Cell, t Task) []matrix.Cell {
	d.checked.Add(1)
	if d.nodes[t.SrcIndex].Name != t.Src.Name || d.nodes[t.DstIndex].Name != t.Dst.Name {
		d.t.Errorf("task %s > %s with positions %d > %d", t.Src.Name, t.Dst.Name, t.SrcIndex, t.DstIndex)
	}
	if t.Src.Name == "n1" {
		d.fromN1.Add(1)
	}
	return figureDispatch{}.Phase(ctx, out, t)
}

// A task names its ends' positions in the sweep's start record, the right
// way round when a pair's first direction has nothing to test in a phase
// and the second's goes alone (cross rails, n0 usable on rail 0 only, n1 on
// rail 1 only: n1 > n0 links 1 > 0 in a phase where n0 > n1 has nothing).
func TestPoolTasksCarryPositions(t *testing.T) {
	h := newHarness(t, 3, 3, Spec{RailMode: "cross"})
	for r := range 3 {
		h.rec.Nodes[0].Ports[r].Usable = r == 0
		h.rec.Nodes[1].Ports[r].Usable = r == 1
	}
	p := NewPool(0)
	defer p.Stop()
	var fromN1, checked atomic.Int64
	rd := scheduler.Round{Pairs: []scheduler.Pair{{A: "n0", B: "n1"}}}
	p.Round(context.Background(), indexDispatch{t, h.rec.Nodes, &fromN1, &checked}, "s", &h.rec.Spec, NewNodes(h.rec.Nodes), rd)
	if fromN1.Load() == 0 || checked.Load() < 2 {
		t.Fatalf("%d tasks, %d started by n1: the pair's second direction never went alone", checked.Load(), fromN1.Load())
	}
}
