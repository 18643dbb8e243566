package store

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"slices"
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

func gridNodes(n, rails int) []matrix.Node {
	nodes := make([]matrix.Node, n)
	for i := range nodes {
		nodes[i].Name = fmt.Sprintf("n%03d", i)
		for r := 0; r < rails; r++ {
			nodes[i].Ports = append(nodes[i].Ports, probe.Port{Device: fmt.Sprintf("mlx5_%d", r), Port: 1, Rail: r, Usable: true})
		}
	}
	return nodes
}

// randomCells is every directional cell of nodes with a mix of what
// sweeps produce: measured cells, failures with shared and unique errors,
// bandwidth on some, odd sample counts on a few.
func randomCells(rng *rand.Rand, nodes []matrix.Node, round int) []matrix.Cell {
	var out []matrix.Cell
	down := &probe.Error{Class: probe.ClassPortDown, Verb: "ibv_modify_qp(RTR)", Errno: 19, Cause: "port down", Fix: "replug"}
	for s := range nodes {
		for d := range nodes {
			if s == d {
				continue
			}
			for r := range nodes[s].Ports {
				c := sweep.CellFor(nodes[s].Name, nodes[d].Name, round, probe.RailPair{Rail: r,
					Src: probe.Endpoint{Device: nodes[s].Ports[r].Device}, Dst: probe.Endpoint{Device: nodes[d].Ports[r].Device, Rail: r}})
				switch x := rng.IntN(20); x {
				case 0:
					c.Class, c.Error = down.Class, down
				case 1:
					c.Class = probe.ClassRetryExceeded
					c.Error = &probe.Error{Class: c.Class, WCStatus: 12, Cause: fmt.Sprintf("lost %s→%s", c.Src, c.Dst)}
				default:
					p50 := 1000 + 100*rng.Float64()
					samples := 1000
					if x == 2 {
						samples = 7
					}
					c.Class = probe.ClassOK
					c.Latency = &probe.Latency{Samples: samples, MinNs: p50 * 0.97, P50Ns: p50, P90Ns: p50 * 1.05, P99Ns: p50 * 1.2,
						P999Ns: p50 * 1.5, MaxNs: p50 * 3, StdevNs: p50 * 0.03}
					if x%3 == 0 {
						c.Bandwidth = &probe.Bandwidth{Gbps: 390 + rng.Float64(), MsgRate: 7e5, Bytes: 1 << 24, Duration: 0.0123}
					}
				}
				out = append(out, c)
			}
		}
	}
	return out
}

func sortCells(cs []matrix.Cell) []matrix.Cell {
	m := map[cellKey]wire.Cell{}
	for i := range cs {
		c := cellIn(&cs[i])
		m[keyOf(&c)] = c
	}
	return cellsOut(sortedCells(m))
}

// quantizedCell is c as the store gives it back.
func quantizedCell(c matrix.Cell) matrix.Cell {
	w := quantized(cellIn(&c))
	return cellOut(&w)
}

// TestGridRoundsMatchWholeCells applies the same rounds with their cells
// in grid form and kept whole: both FSMs must hold the same cells, the
// quantized inputs.
func TestGridRoundsMatchWholeCells(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	nodes := gridNodes(9, 3)
	x := NewNodeIndex(nodes)
	start := entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning}, Nodes: nodes})
	grid, whole := New(5, nil), New(5, nil)
	grid.Apply(start)
	whole.Apply(start)
	var want []matrix.Cell
	for round := range 2 {
		cells := randomCells(rng, nodes, round)
		r := sweep.RoundResult{SweepID: "s1", Round: round, Cells: cells}
		b, err := EncodeRound(&x, r)
		if err != nil {
			t.Fatal(err)
		}
		if rr, err := wire.ReadRound(b[1:]); err != nil || rr.Cells != len(cells) || len(rr.Whole) != 0 {
			t.Fatalf("round %d: %v; want every cell in grid form", round, err)
		}
		grid.Apply(&raft.Log{Index: 2, Data: b})
		grid.Apply(&raft.Log{Index: 3, Data: b}) // replayed: ignored
		whole.Apply(entry(t, EntryRound, r))
		for _, c := range cells {
			want = append(want, quantizedCell(c))
		}
	}
	want = sortCells(want)
	for name, f := range map[string]*FSM{"grid": grid, "whole": whole} {
		sv, _ := f.sweepData("s1")
		got := sortCells(sv.Cells)
		if len(got) != len(want) || sv.Info.CellsDone != len(want) {
			t.Fatalf("%s: %d cells (CellsDone %d), want %d", name, len(got), sv.Info.CellsDone, len(want))
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("%s cell %d:\n got %+v\nwant %+v", name, i, got[i], want[i])
			}
		}
	}
}

// TestRoundKeepsOffGridCellsWhole: cells the grid cannot hold travel whole.
func TestRoundKeepsOffGridCellsWhole(t *testing.T) {
	x := NewNodeIndex(gridNodes(3, 2))
	dr := 1
	for _, c := range []matrix.Cell{
		{Src: "n000", Dst: "n001", Rail: 0, DstRail: &dr, SrcDevice: "mlx5_0", DstDevice: "mlx5_1", Class: probe.ClassOK},
		{Src: "n000", Dst: "stranger", Rail: 0, SrcDevice: "mlx5_0", Class: probe.ClassOK},
		{Src: "n000", Dst: "n001", Rail: 0, SrcDevice: "mlx5_9", DstDevice: "mlx5_0", Class: probe.ClassOK},
		{Src: "n000", Dst: "n001", Rail: 1, SrcDevice: "mlx5_1", DstDevice: "mlx5_0", Class: probe.ClassOK},
	} {
		// After a cell of the same direction that fits: the encoder
		// remembers the direction's nodes, and must still check each
		// cell's own devices.
		good := matrix.Cell{Src: c.Src, Dst: c.Dst, Rail: 0, SrcDevice: "mlx5_0", DstDevice: "mlx5_0", Class: probe.ClassOK}
		b, err := EncodeRound(&x, sweep.RoundResult{SweepID: "s", Cells: []matrix.Cell{good, c}})
		if err != nil {
			t.Fatal(err)
		}
		grid, whole := 1, 1
		if c.Dst == "stranger" {
			grid, whole = 0, 2
		}
		if rr, err := wire.ReadRound(b[1:]); err != nil || rr.Cells != grid || len(rr.Whole) != whole {
			t.Errorf("%+v: %v; want the cell whole", c, err)
		}
	}
}

func TestRoundCorrupt(t *testing.T) {
	nodes := gridNodes(4, 2)
	x := NewNodeIndex(nodes)
	b, err := EncodeRound(&x, sweep.RoundResult{SweepID: "s1", Cells: randomCells(rand.New(rand.NewPCG(3, 4)), nodes, 0)})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{b[1:2], {wire.RoundVersion + 1}, append(slices.Clone(b[1:]), 0), b[1 : len(b)-3]} {
		f := New(1, nil)
		f.Apply(entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1"}, Nodes: nodes}))
		if err := f.applyRound(bad); err == nil {
			t.Errorf("corrupt entry of %d bytes applied without error", len(bad))
		}
	}
}

// TestSnapshotStreamsFrozenState: a snapshot persisted after more rounds
// were applied still holds what was there when it was taken, and restores
// to the same cells.
func TestSnapshotStreamsFrozenState(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	nodes := gridNodes(6, 2)
	x := NewNodeIndex(nodes)
	f := New(5, nil)
	f.Apply(entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning}, Nodes: nodes}))
	apply := func(round int) {
		b, err := EncodeRound(&x, sweep.RoundResult{SweepID: "s1", Round: round, Cells: randomCells(rng, nodes, round)})
		if err != nil {
			t.Fatal(err)
		}
		f.Apply(&raft.Log{Data: b})
	}
	apply(0)
	f.Apply(entry(t, EntryRound, sweep.RoundResult{SweepID: "s1", Round: 1, Cells: []matrix.Cell{okCell("x", "y", 0)}}))
	before, _ := f.sweepData("s1")
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	apply(2) // rewrites every grid cell after the snapshot was taken
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	g := New(5, nil)
	if err := g.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	after, _ := g.sweepData("s1")
	if !reflect.DeepEqual(sortCells(after.Cells), sortCells(before.Cells)) || after.Info.CellsDone != before.Info.CellsDone {
		t.Fatalf("restored %d cells, snapshot held %d (or they differ)", len(after.Cells), len(before.Cells))
	}

}

// A sweep's record holds one string per device name, whichever node's
// port it is, so the leader's comparisons of devices stop at the pointer.
func TestRecordSharesDeviceNames(t *testing.T) {
	f := New(1, nil)
	f.Apply(&raft.Log{Data: mustStart(t, Start{Info: api.SweepInfo{ID: "s", State: api.SweepRunning}, Nodes: gridNodes(3, 2)})})
	sv, ok := f.Meta("s")
	if !ok {
		t.Fatal("no sweep s")
	}
	for rail := range 2 {
		a, b := sv.Nodes[0].Ports[rail].Device, sv.Nodes[2].Ports[rail].Device
		if a != fmt.Sprintf("mlx5_%d", rail) || unsafe.StringData(a) != unsafe.StringData(b) {
			t.Fatalf("rail %d: devices %q and %q are two strings", rail, a, b)
		}
	}
}

// A cell that came with its worker's codes (matrix.Cell.LatencyCodes) is
// recorded with those codes, not its figures quantised again: a log-scale
// code whose figure is a whole number would come back as the exact code
// for that number. Either decodes to the same figure. Codes that are no
// longer the cell's figures' are not taken.
func TestRoundKeepsTheWorkersCodes(t *testing.T) {
	alias := uint16(0)
	for c := 1 << 14; c <= 0xffff; c++ {
		if wire.Quant(wire.Unquant(uint16(c))) != uint16(c) {
			alias = uint16(c)
			break
		}
	}
	if alias == 0 {
		t.Fatal("no log-scale code decodes to a whole number")
	}
	nodes := gridNodes(2, 1)
	x := NewNodeIndex(nodes)
	rp := probe.RailPair{Src: probe.Endpoint{Device: "mlx5_0"}, Dst: probe.Endpoint{Device: "mlx5_0"}}
	var cells []matrix.Cell
	for _, coded := range []bool{true, false} {
		src, dst := nodes[0].Name, nodes[1].Name
		if !coded {
			src, dst = dst, src
		}
		q := [7]uint16{alias, alias, alias, alias, alias, alias, 3}
		c := sweep.CellFor(src, dst, 0, rp)
		c.Class, c.Latency = probe.ClassOK, new(wire.LatQ(q).Latency(1000))
		if coded {
			c.LatencyCodes = &q
		} else {
			stale := [7]uint16{9, 9, 9, 9, 9, 9, 9} // not this cell's figures'
			c.LatencyCodes = &stale
		}
		cells = append(cells, c)
	}
	b, err := EncodeRound(&x, sweep.RoundResult{SweepID: "s", Round: 0, Cells: cells})
	if err != nil {
		t.Fatal(err)
	}
	rr, err := wire.ReadRound(b[1:])
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	exact := wire.Quant(wire.Unquant(alias))
	for i, want := range []uint16{alias, exact} {
		var g wire.GridCodes
		if err := rr.Next(&g); err != nil {
			t.Fatal(err)
		}
		if g.Lat[1] != want || g.Lat[6] != 3 || wire.Unquant(g.Lat[1]) != wire.Unquant(alias) {
			t.Fatalf("cell %d (%d > %d): p50 code %d, want %d", i, g.Src, g.Dst, g.Lat[1], want)
		}
	}
}

// TestLiteCellsMatchCells: a round whose plain cells come as lite cells
// applies to the same cells as the round with every cell a matrix.Cell,
// in grid form when the index lists the round's nodes, and whole when
// there is no index or it lists other nodes (a device differs).
func TestLiteCellsMatchCells(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	nodes := gridNodes(9, 3)
	pos := map[string]int32{}
	for i, n := range nodes {
		pos[n.Name] = int32(i)
	}
	other := slices.Clone(nodes)
	other[4].Ports = slices.Clone(other[4].Ports)
	other[4].Ports[2].Device = "mlx5_9"
	x, xOther := NewNodeIndex(nodes), NewNodeIndex(other)
	start := entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning}, Nodes: nodes})
	cells := randomCells(rng, nodes, 3)
	rest, lite := splitLite(cells, pos)
	if len(lite) == 0 || len(rest) == 0 {
		t.Fatalf("%d lite, %d other cells: the round must have both", len(lite), len(rest))
	}
	apply := func(x *NodeIndex, r sweep.RoundResult, grid, whole int) []matrix.Cell {
		t.Helper()
		f := New(5, nil)
		f.Apply(start)
		encode := EncodeRound
		if r.Lite != nil && x != nil {
			encode = f.EncodeOwnRound // the leader's: the FSM takes the codes it kept
		}
		b, err := encode(x, r)
		if err != nil {
			t.Fatal(err)
		}
		rr, err := wire.ReadRound(b[1:])
		if err != nil {
			t.Fatal(err)
		}
		if rr.Cells != grid || len(rr.Whole) != whole {
			t.Errorf("%d cells in grid form, %d whole; want %d and %d", rr.Cells, len(rr.Whole), grid, whole)
		}
		rr.Release()
		f.Apply(&raft.Log{Index: 2, Data: b})
		sv, _ := f.sweepData("s1")
		return sortCells(sv.Cells)
	}
	want := apply(&x, sweep.RoundResult{SweepID: "s1", Round: 3, Cells: cells}, len(cells), 0)
	split := sweep.RoundResult{SweepID: "s1", Round: 3, Cells: rest, Lite: lite, Nodes: nodes}
	for name, got := range map[string][]matrix.Cell{
		"grid":        apply(&x, split, len(cells), 0),
		"no index":    apply(nil, split, 0, len(cells)),
		"other nodes": apply(&xOther, split, len(rest)-countOn(rest, 4, 2), len(lite)+countOn(rest, 4, 2)),
	} {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the store holds other cells than the round's as matrix cells", name)
		}
	}
}

// splitLite makes cs's plain cells (ok, latency alone) lite cells, as the
// dispatch does, their figures the codes': the rest stay cells. cs's
// plain cells get the same figures and codes, for the round of cells
// alone to compare with.
func splitLite(cs []matrix.Cell, pos map[string]int32) (rest []matrix.Cell, lite []sweep.LiteCell) {
	for i := range cs {
		c := &cs[i]
		if c.Class != probe.ClassOK || c.Bandwidth != nil || c.Latency == nil || c.Error != nil {
			rest = append(rest, *c)
			continue
		}
		q := wire.LatCodes(c.Latency)
		c.Latency, c.LatencyCodes = new(q.Latency(uint32(c.Latency.Samples))), (*[7]uint16)(&q)
		lite = append(lite, sweep.LiteCell{Src: pos[c.Src], Dst: pos[c.Dst], Rail: uint16(c.Rail), Flow: c.Flow, BackFlow: c.BackFlow,
			Samples: uint32(c.Latency.Samples), Codes: q})
	}
	return rest, lite
}

// A confirmation round's lite cells merge into the first measurements as
// attempts, as its cells did, through the leader's kept codes and a
// follower's decoding alike.
func TestLiteCellsInARetestRound(t *testing.T) {
	nodes := gridNodes(6, 3)
	pos := map[string]int32{}
	for i, n := range nodes {
		pos[n.Name] = int32(i)
	}
	start := entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning}, Nodes: nodes})
	first := randomCells(rand.New(rand.NewPCG(3, 4)), nodes, 0)
	again := randomCells(rand.New(rand.NewPCG(5, 6)), nodes, 1)
	rest, lite := splitLite(again, pos)
	plan := EncodeRetestPlan(sweep.RetestPlan{SweepID: "s1", Pass: 1, Pairs: 1,
		Rounds: []scheduler.Round{{Index: 1, Pairs: []scheduler.Pair{{A: "n000", B: "n001"}}}}})
	run := func(r sweep.RoundResult, own bool) []matrix.Cell {
		t.Helper()
		x := NewNodeIndex(nodes)
		f := New(5, nil)
		f.Apply(start)
		b0, err := EncodeRound(&x, sweep.RoundResult{SweepID: "s1", Round: 0, Cells: first})
		if err != nil {
			t.Fatal(err)
		}
		f.Apply(&raft.Log{Index: 2, Data: b0})
		f.Apply(&raft.Log{Index: 3, Data: plan})
		encode := EncodeRound
		if own {
			encode = f.EncodeOwnRound
		}
		b, err := encode(&x, r)
		if err != nil {
			t.Fatal(err)
		}
		f.Apply(&raft.Log{Index: 4, Data: b})
		sv, _ := f.sweepData("s1")
		return sortCells(sv.Cells)
	}
	want := run(sweep.RoundResult{SweepID: "s1", Round: 1, Cells: again}, false)
	retests := 0
	for _, c := range want {
		retests += len(c.Retests)
	}
	if len(lite) == 0 || retests == 0 {
		t.Fatalf("%d lite cells, %d attempts: the round must retest with lite cells", len(lite), retests)
	}
	for _, own := range []bool{false, true} {
		if got := run(sweep.RoundResult{SweepID: "s1", Round: 1, Cells: rest, Lite: lite, Nodes: nodes}, own); !reflect.DeepEqual(got, want) {
			t.Errorf("kept codes %v: the retest round with lite cells merged other attempts", own)
		}
	}
}

// countOn is how many of cs have node n%03d at an end on rail.
func countOn(cs []matrix.Cell, n, rail int) int {
	k := 0
	for _, c := range cs {
		if c.Rail == rail && (c.Src == fmt.Sprintf("n%03d", n) || c.Dst == fmt.Sprintf("n%03d", n)) {
			k++
		}
	}
	return k
}
