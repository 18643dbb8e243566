package store

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// cellFlows is a cell's flow and back flow.
type cellFlows struct{ Flow, Back uint16 }

func flowsOf(c *matrix.Cell) cellFlows { return cellFlows{c.Flow, c.BackFlow} }

// flowRound is a round of every cell of nodes, each with a flow of its
// own but every seventh (0: unknown) and a back flow of its own but every
// fifth, and a cross-rail cell, which the store keeps whole; want is each
// cell's flows.
func flowRound(nodes []matrix.Node, round int) (cells []matrix.Cell, want map[cellKey]cellFlows) {
	cells = randomCells(rand.New(rand.NewPCG(11, 12)), nodes, round)
	want = map[cellKey]cellFlows{}
	for i := range cells {
		c := &cells[i]
		if i%7 != 0 {
			c.Flow = 0xc000 | uint16(i+round)
		}
		if i%5 != 0 {
			c.BackFlow = 0xd000 | uint16(i+round)
		}
	}
	one := 1
	cross := okCell(nodes[0].Name, nodes[1].Name, 0)
	cross.DstRail, cross.Round, cross.Flow, cross.BackFlow = &one, round, 0xbeef, 0xfade
	cells = append(cells, cross)
	for i := range cells {
		w := cellIn(&cells[i])
		want[keyOf(&w)] = flowsOf(&cells[i])
	}
	return cells, want
}

// storedFlows reads every cell's flows as the analysis gets them: through
// GridSource's Fill and its cells kept whole, and from the matrix built
// on them.
func storedFlows(t *testing.T, f *FSM) (fill, built map[cellKey]cellFlows) {
	t.Helper()
	sv, grid, ok := f.Grid("s1")
	if !ok {
		t.Fatal("no sweep s1")
	}
	fill, built = map[cellKey]cellFlows{}, map[cellKey]cellFlows{}
	add := func(m map[cellKey]cellFlows, c *matrix.Cell) {
		w := cellIn(c)
		m[keyOf(&w)] = flowsOf(c)
	}
	for s := range sv.Nodes {
		for d := range sv.Nodes {
			for r := range grid.Rails() {
				var c matrix.Cell
				if grid.Fill(&c, s, d, r) {
					add(fill, &c)
				}
			}
		}
	}
	for _, c := range grid.ExtraCells() {
		add(fill, &c)
	}
	m := matrix.Analyse(sv.Nodes, grid, grid.ExtraCells(), matrix.DefaultThresholds())
	if err := m.EachCell(func(_ int, r *matrix.Result) error {
		add(built, &r.Cell)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i := range m.Cross {
		add(built, &m.Cross[i].Cell)
	}
	return fill, built
}

func sameFlows(t *testing.T, what string, got, want map[cellKey]cellFlows) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d cells, want %d", what, len(got), len(want))
	}
	for k, f := range want {
		if g, ok := got[k]; !ok || g != f {
			t.Fatalf("%s: %v has flows %#x (present %v), want %#x", what, k, g, ok, f)
		}
	}
}

// A cell's flows survive every way a round reaches the store (decoded,
// the leader's kept codes, kept whole, plain cells as lite ones), a
// snapshot and a restore, up to the matrix built from the store.
func TestFlowsReachTheMatrix(t *testing.T) {
	nodes := gridNodes(5, 2)
	x := NewNodeIndex(nodes)
	pos := map[string]int32{}
	for i, n := range nodes {
		pos[n.Name] = int32(i)
	}
	cells, want := flowRound(nodes, 3)
	same := len(cells) - 1 // the cross-rail cell is never a lite one
	rest, lite := splitLite(append([]matrix.Cell(nil), cells[:same]...), pos)
	rest = append(rest, cells[same])
	start := entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning}, Nodes: nodes})
	for name, encode := range map[string]func(f *FSM) ([]byte, error){
		"decoded": func(*FSM) ([]byte, error) {
			return EncodeRound(&x, sweep.RoundResult{SweepID: "s1", Round: 3, Cells: cells})
		},
		"kept": func(f *FSM) ([]byte, error) {
			return f.EncodeOwnRound(&x, sweep.RoundResult{SweepID: "s1", Round: 3, Cells: cells})
		},
		"whole": func(*FSM) ([]byte, error) {
			return EncodeRound(nil, sweep.RoundResult{SweepID: "s1", Round: 3, Cells: cells})
		},
		"lite": func(f *FSM) ([]byte, error) {
			return f.EncodeOwnRound(&x, sweep.RoundResult{SweepID: "s1", Round: 3, Cells: rest, Lite: lite, Nodes: nodes})
		},
		"lite decoded": func(*FSM) ([]byte, error) {
			return EncodeRound(&x, sweep.RoundResult{SweepID: "s1", Round: 3, Cells: rest, Lite: lite, Nodes: nodes})
		},
		"lite whole": func(*FSM) ([]byte, error) {
			return EncodeRound(nil, sweep.RoundResult{SweepID: "s1", Round: 3, Cells: rest, Lite: lite, Nodes: nodes})
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := New(5, nil)
			f.Apply(start)
			b, err := encode(f)
			if err != nil {
				t.Fatal(err)
			}
			f.Apply(&raft.Log{Index: 2, Data: b})
			fill, built := storedFlows(t, f)
			sameFlows(t, "the store's cells", fill, want)
			sameFlows(t, "the matrix's cells", built, want)
			g := New(5, nil)
			if err := g.Restore(io.NopCloser(bytes.NewReader(snapshotBytes(t, f)))); err != nil {
				t.Fatal(err)
			}
			fill, built = storedFlows(t, g)
			sameFlows(t, "the restored store's cells", fill, want)
			sameFlows(t, "the restored matrix's cells", built, want)
		})
	}
}

// A retest round's cells reach the store one by one (a cell already
// measured takes the retest as an attempt, a new one is put whole from
// its grid codes), and the new ones keep their flows.
func TestFlowsOfARetestRound(t *testing.T) {
	nodes := gridNodes(4, 2)
	x := NewNodeIndex(nodes)
	cells, want := flowRound(nodes, 3)
	f := New(5, nil)
	f.Apply(entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning}, Nodes: nodes}))
	f.Apply(entry(t, EntryRetestPlan, sweep.RetestPlan{SweepID: "s1", Pass: 1, Pairs: 1, Rounds: []scheduler.Round{{Index: 3}}}))
	b, err := EncodeRound(&x, sweep.RoundResult{SweepID: "s1", Round: 3, Cells: cells})
	if err != nil {
		t.Fatal(err)
	}
	f.Apply(&raft.Log{Data: b})
	fill, built := storedFlows(t, f)
	sameFlows(t, "the store's cells", fill, want)
	sameFlows(t, "the matrix's cells", built, want)
}

// A frozen view keeps the flows it was frozen with while later rounds
// rewrite them: the copy-on-write covers the flows with their blocks.
func TestFlowsCopiedOnWrite(t *testing.T) {
	nodes := gridNodes(4, 2)
	x := NewNodeIndex(nodes)
	f := New(5, nil)
	f.Apply(entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning}, Nodes: nodes}))
	apply := func(round int, flow func(i int) cellFlows) {
		t.Helper()
		cells := randomCells(rand.New(rand.NewPCG(1, 2)), nodes, round)
		for i := range cells {
			fl := flow(i)
			cells[i].Flow, cells[i].BackFlow = fl.Flow, fl.Back
		}
		b, err := EncodeRound(&x, sweep.RoundResult{SweepID: "s1", Round: round, Cells: cells})
		if err != nil {
			t.Fatal(err)
		}
		f.Apply(&raft.Log{Data: b})
	}
	apply(0, func(i int) cellFlows { return cellFlows{0xc000 | uint16(i), 0xd000 | uint16(i)} })
	first, _ := storedFlows(t, f)
	_, frozen, _ := f.Grid("s1")
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	// New flows, and none on half the cells, each of the two on its half.
	apply(1, func(i int) cellFlows { return cellFlows{uint16(i % 2), uint16((i + 1) % 2)} })
	second, _ := storedFlows(t, f)
	for k, v := range second {
		if v.Flow == first[k].Flow || v.Back == first[k].Back {
			t.Fatalf("%v: the second round did not change its flows %#x", k, v)
		}
	}
	was := map[cellKey]cellFlows{}
	for s := range nodes {
		for d := range nodes {
			for r := range 2 {
				var c matrix.Cell
				if frozen.Fill(&c, s, d, r) {
					w := cellIn(&c)
					was[keyOf(&w)] = flowsOf(&c)
				}
			}
		}
	}
	sameFlows(t, "the frozen view", was, first)
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	g := New(5, nil)
	if err := g.Restore(io.NopCloser(&sink.Buffer)); err != nil {
		t.Fatal(err)
	}
	restored, _ := storedFlows(t, g)
	sameFlows(t, "the snapshot taken before the second round", restored, first)
}

// Flows cost nothing while no cell has one, and about 2.1 bytes a cell
// when every cell has one: a 128-byte array a block, and a pointer. Back
// flows cost the same again, apart: a sweep with one kind alone pays for
// that one.
func TestFlowBytesPerCell(t *testing.T) {
	nodes := gridNodes(40, 8)
	x := NewNodeIndex(nodes)
	size := func(fs []*wire.FlowBlock) int {
		n := len(fs) * int(unsafe.Sizeof(&wire.FlowBlock{}))
		for _, fb := range fs {
			if fb != nil {
				n += int(unsafe.Sizeof(*fb))
			}
		}
		return n
	}
	for _, c := range []struct{ flows, back bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		f := New(5, nil)
		f.Apply(entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning}, Nodes: nodes}))
		cells := randomCells(rand.New(rand.NewPCG(3, 4)), nodes, 0)
		for i := range cells {
			if c.flows {
				cells[i].Flow = 0xc000 | uint16(i)
			}
			if c.back {
				cells[i].BackFlow = 0xd000 | uint16(i)
			}
		}
		b, err := EncodeRound(&x, sweep.RoundResult{SweepID: "s1", Round: 0, Cells: cells})
		if err != nil {
			t.Fatal(err)
		}
		f.Apply(&raft.Log{Data: b})
		st := f.sweeps["s1"].Cells
		per := float64(size(st.flows)) / float64(st.len())
		back := float64(size(st.backFlows)) / float64(st.len())
		t.Logf("flows %v, back flows %v: %d cells, %.3f + %.3f = %.3f bytes a cell for them", c.flows, c.back, st.len(), per, back, per+back)
		for _, k := range []struct {
			what string
			want bool
			fs   []*wire.FlowBlock
			per  float64
		}{{"flows", c.flows, st.flows, per}, {"back flows", c.back, st.backFlows, back}} {
			if !k.want && k.fs != nil || k.want && (k.per == 0 || k.per > 2.2) {
				t.Fatalf("flows %v, back flows %v: %.3f bytes a cell for %s (%d blocks of them)", c.flows, c.back, k.per, k.what, len(k.fs))
			}
		}
	}
}

// A cell written again without flows loses the ones it had; a view
// frozen before keeps them.
func TestFlowCleared(t *testing.T) {
	st := newCellStore(nodesIn(gridNodes(3, 1)))
	c := cellIn(&matrix.Cell{Src: "n000", Dst: "n001", Rail: 0, SrcDevice: "mlx5_0", DstDevice: "mlx5_0", Class: probe.ClassOK, Flow: 0xc001,
		BackFlow: 0xc002})
	st.put(c)
	slot, _ := st.slotOf(&c)
	v := st.freeze()
	if got, back := v.flowAt(slot), v.backFlowAt(slot); got != 0xc001 || back != 0xc002 {
		t.Fatalf("flows %#x and %#x, want 0xc001 and 0xc002", got, back)
	}
	c.Flow, c.BackFlow = 0, 0
	st.put(c)
	if now := st.view(); now.flowAt(slot) != 0 || now.backFlowAt(slot) != 0 {
		t.Fatalf("flows %#x and %#x after a write without them", now.flowAt(slot), now.backFlowAt(slot))
	}
	if got, back := v.flowAt(slot), v.backFlowAt(slot); got != 0xc001 || back != 0xc002 {
		t.Fatalf("the frozen view's flows became %#x and %#x", got, back)
	}
}
