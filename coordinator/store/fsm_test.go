package store

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// entry is v as the entry of type typ, through the store's own encoders
// (a round with every cell whole: the FSM puts each where it fits); a
// value of no entry type the store knows is a stand-in body for typ.
func entry(tb testing.TB, typ EntryType, v any) *raft.Log {
	tb.Helper()
	var b []byte
	switch v := v.(type) {
	case Start:
		var err error
		if b, err = EncodeStart(v); err != nil {
			tb.Fatal(err)
		}
	case sweep.RoundResult:
		var err error
		if b, err = EncodeRound(nil, v); err != nil {
			tb.Fatal(err)
		}
	case sweep.RetestPlan:
		b = EncodeRetestPlan(v)
	case End:
		b = EncodeEnd(v)
	default:
		b = append([]byte{byte(typ), 1}, fmt.Sprint(v)...)
	}
	if EntryType(b[0]) != typ {
		tb.Fatalf("a %T encodes as entry type %d, not %d", v, b[0], typ)
	}
	return &raft.Log{Index: 1, Data: b}
}

func okCell(src, dst string, rail int) matrix.Cell {
	return matrix.Cell{Src: src, Dst: dst, Rail: rail, Class: probe.ClassOK, Latency: &probe.Latency{P50Ns: 1000}}
}

func TestFSMApply(t *testing.T) {
	cases := []struct {
		name       string
		entries    func(t *testing.T) []*raft.Log
		wantCells  int
		wantRounds int
		wantState  string
	}{
		{"start only", func(t *testing.T) []*raft.Log {
			t.Helper()
			return []*raft.Log{entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning}})}
		}, 0, 0, api.SweepRunning},
		{"two rounds", func(t *testing.T) []*raft.Log {
			t.Helper()
			return []*raft.Log{
				entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning}}),
				entry(t, EntryRound, sweep.RoundResult{SweepID: "s1", Round: 0, Cells: []matrix.Cell{okCell("a", "b", 0), okCell("b", "a", 0)}}),
				entry(t, EntryRound, sweep.RoundResult{SweepID: "s1", Round: 1, Cells: []matrix.Cell{okCell("a", "c", 0), okCell("c", "a", 0)}}),
			}
		}, 4, 2, api.SweepRunning},
		{"round replayed by a new leader is not duplicated", func(t *testing.T) []*raft.Log {
			t.Helper()
			r := sweep.RoundResult{SweepID: "s1", Round: 0, Cells: []matrix.Cell{okCell("a", "b", 0), okCell("b", "a", 0)}}
			return []*raft.Log{
				entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning}}),
				entry(t, EntryRound, r), entry(t, EntryRound, r),
				entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning}}),
			}
		}, 2, 1, api.SweepRunning},
		{"ended", func(t *testing.T) []*raft.Log {
			t.Helper()
			return []*raft.Log{
				entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning}}),
				entry(t, EntrySweepEnd, End{SweepID: "s1", State: api.SweepDone}),
			}
		}, 0, 0, api.SweepDone},
		{"round for an unknown sweep is ignored", func(t *testing.T) []*raft.Log {
			t.Helper()
			return []*raft.Log{
				entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning}}),
				entry(t, EntryRound, sweep.RoundResult{SweepID: "gone", Round: 0, Cells: []matrix.Cell{okCell("a", "b", 0)}}),
			}
		}, 0, 0, api.SweepRunning},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := New(10, nil)
			for _, l := range tc.entries(t) {
				f.Apply(l)
			}
			info, ok := f.Info("s1")
			if !ok {
				t.Fatal("sweep s1 missing")
			}
			if info.CellsDone != tc.wantCells || info.RoundsDone != tc.wantRounds || info.State != tc.wantState {
				t.Fatalf("got cells %d rounds %d state %s", info.CellsDone, info.RoundsDone, info.State)
			}
		})
	}
}

func TestFSMKeepsLastN(t *testing.T) {
	f := New(2, nil)
	for _, id := range []string{"s1", "s2", "s3"} {
		f.Apply(entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: id}}))
	}
	infos := f.Infos()
	if len(infos) != 2 || infos[0].ID != "s3" || infos[1].ID != "s2" {
		t.Fatalf("got %+v", infos)
	}
}

func TestFSMPanicsOnGarbage(t *testing.T) {
	for name, data := range map[string][]byte{"empty": nil, "unknown type": {99, '{', '}'}, "bad entry": {byte(EntryRound), '{'},
		"other version": {byte(EntrySweepEnd), 2}} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic: replicas could diverge silently")
				}
			}()
			New(1, nil).Apply(&raft.Log{Data: data})
		})
	}
}

type memSink struct{ bytes.Buffer }

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { return nil }
func (s *memSink) Close() error  { return nil }

// snapshotBytes is what f's snapshot streams.
func snapshotBytes(tb testing.TB, f *FSM) []byte {
	tb.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		tb.Fatal(err)
	}
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		tb.Fatal(err)
	}
	return sink.Bytes()
}

func TestFSMSnapshotRestore(t *testing.T) {
	f := New(5, nil)
	f.Apply(entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning},
		Spec: sweep.Spec{Params: probe.DefaultTestParams()}, Nodes: []matrix.Node{{Name: "a"}, {Name: "b"}}}))
	f.Apply(entry(t, EntryRound, sweep.RoundResult{SweepID: "s1", Round: 0, Cells: []matrix.Cell{okCell("a", "b", 0), okCell("b", "a", 0)}}))
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	// Later applies must not leak into the captured snapshot.
	f.Apply(entry(t, EntryRound, sweep.RoundResult{SweepID: "s1", Round: 1, Cells: []matrix.Cell{okCell("a", "c", 0)}}))
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	g := New(5, nil)
	if err := g.Restore(io.NopCloser(&sink.Buffer)); err != nil {
		t.Fatal(err)
	}
	sv, ok := g.sweepData("s1")
	if !ok || len(sv.Cells) != 2 || !sv.Rounds[0] || sv.Rounds[1] || len(sv.Nodes) != 2 || sv.Spec.Params.LatencyIters != 1000 {
		t.Fatalf("restored %+v", sv)
	}
	if got := g.Running(); len(got) != 1 || got[0] != "s1" {
		t.Fatalf("running after restore: %v", got)
	}
}

// The version keys the coordinator's matrix cache: it must move with the
// cells and stay put across header-only changes, or the leader's end-of-sweep
// matrix is built twice.
func TestFSMVersionFollowsTheAnalysisInputs(t *testing.T) {
	f := New(5, nil)
	f.Apply(entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning}}))
	v0, _ := f.Version("s1")
	f.Apply(entry(t, EntryRound, sweep.RoundResult{SweepID: "s1", Round: 0, Cells: []matrix.Cell{okCell("a", "b", 0)}}))
	v1, _ := f.Version("s1")
	f.Apply(entry(t, EntryRetestPlan, sweep.RetestPlan{SweepID: "s1", Pass: 1, Rounds: []scheduler.Round{{Index: 1}}, Pairs: 1}))
	v2, _ := f.Version("s1")
	f.Apply(entry(t, EntryRound, sweep.RoundResult{SweepID: "s1", Round: 1, Cells: []matrix.Cell{okCell("a", "b", 0)}}))
	v3, _ := f.Version("s1")
	f.Apply(entry(t, EntrySweepEnd, End{SweepID: "s1", State: api.SweepDone}))
	v4, _ := f.Version("s1")
	if v0 == v1 || v2 == v3 {
		t.Fatalf("versions %d %d %d %d: a round's cells must give a new version", v0, v1, v2, v3)
	}
	if v1 != v2 || v3 != v4 {
		t.Fatalf("versions %d %d %d %d: a retest plan or the sweep's end changes no cell and must keep the version", v1, v2, v3, v4)
	}
	if info, _ := f.Info("s1"); info.State != api.SweepDone || info.RetestPass != 1 {
		t.Fatalf("header %+v: the end and the plan must still land", info)
	}
	if _, ok := f.Version("nope"); ok {
		t.Fatal("version of an unknown sweep")
	}
}

func TestFSMRetestRoundsAddAttempts(t *testing.T) {
	f := New(5, nil)
	plan := sweep.RetestPlan{SweepID: "s1", Pass: 1, Pairs: 1, Rounds: []scheduler.Round{{Index: 2, Pairs: []scheduler.Pair{{A: "a", B: "b"}}}}}
	retested := okCell("a", "b", 0)
	retested.Round, retested.Latency = 2, &probe.Latency{P50Ns: 900}
	for _, l := range []*raft.Log{
		entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning, Rounds: 2}}),
		entry(t, EntryRound, sweep.RoundResult{SweepID: "s1", Round: 0, Cells: []matrix.Cell{okCell("a", "b", 0), okCell("b", "a", 0)}}),
		entry(t, EntryRetestPlan, plan),
		entry(t, EntryRetestPlan, plan), // a new leader re-proposed it
		entry(t, EntryRound, sweep.RoundResult{SweepID: "s1", Round: 2, Cells: []matrix.Cell{retested}}),
		entry(t, EntryRound, sweep.RoundResult{SweepID: "s1", Round: 2, Cells: []matrix.Cell{retested}}), // and re-ran it
	} {
		f.Apply(l)
	}
	sv, _ := f.sweepData("s1")
	if sv.Info.Rounds != 3 || sv.Info.RetestPass != 1 || sv.Info.Retested != 1 || sv.Info.CellsDone != 2 || sv.Info.RoundsDone != 2 {
		t.Fatalf("info %+v: want 3 rounds (one retest), pass 1, 1 pair retested, 2 cells, 2 rounds done", sv.Info)
	}
	var ab matrix.Cell
	for _, c := range sv.Cells {
		if c.Src == "a" {
			ab = c
		}
	}
	if ab.Latency.P50Ns != 1000 || len(ab.Retests) != 1 || ab.Retests[0].Latency.P50Ns != 900 || ab.Retests[0].Round != 2 {
		t.Fatalf("a→b %+v: want the first measurement kept and one retest attempt", ab)
	}
	// The plan and the attempts survive a snapshot.
	snap, _ := f.Snapshot()
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	g := New(5, nil)
	if err := g.Restore(io.NopCloser(&sink.Buffer)); err != nil {
		t.Fatal(err)
	}
	sv2, _ := g.sweepData("s1")
	if len(sv2.Retests) != 1 || len(sv2.Retests[1].Rounds) != 1 || len(sv2.Cells) != 2 {
		t.Fatalf("after restore: %d plans, %d cells", len(sv2.Retests), len(sv2.Cells))
	}
}

// sweepData is Grid with every cell decoded, for tests that look at
// the cells themselves.
func (f *FSM) sweepData(id string) (View, bool) {
	f.mu.Lock() // freeze bumps the store's epoch
	rec, ok := f.sweeps[id]
	if !ok {
		f.mu.Unlock()
		return View{}, false
	}
	frozen := rec.Cells.freeze()
	sv := f.meta(rec)
	f.mu.Unlock()
	sv.Cells = frozen.cells()
	return sv, true
}

// cells materialises every cell, the grid in slot order and then the
// kept-whole cells sorted: the tests' reference for what the store holds.
func (v *storeView) cells() []matrix.Cell {
	out := make([]matrix.Cell, 0, v.count)
	nLat, nBW := 0, 0
	for _, b := range v.blocks {
		if b == nil {
			continue
		}
		for _, cls := range b.Class {
			if cls&flagLat != 0 {
				nLat++
			}
			if cls&flagBW != 0 {
				nBW++
			}
		}
	}
	lats := make([]probe.Latency, nLat)
	bws := make([]probe.Bandwidth, nBW)
	for bi, b := range v.blocks {
		if b == nil {
			continue
		}
		for j, cls := range b.Class {
			if cls == 0 {
				continue
			}
			var lat *probe.Latency
			var bw *probe.Bandwidth
			if cls&flagLat != 0 {
				lat, lats = &lats[0], lats[1:]
			}
			if cls&flagBW != 0 {
				bw, bws = &bws[0], bws[1:]
			}
			out = append(out, v.cell(int32(bi<<blockBits|j), b, j, lat, bw))
		}
	}
	return append(out, cellsOut(sortedCells(v.extra))...)
}

// The live plan entry is applied and read back; being ignorable, a replica
// without its handler skips it instead of stopping.
func TestLivePlanEntry(t *testing.T) {
	f := New(2, nil)
	if _, ok := f.LivePlan(); ok {
		t.Fatal("a new FSM has a live plan")
	}
	p := wire.LivePlan{ID: 7, Window: 10 * time.Second, Members: []wire.LiveMember{{Name: "a", Rails: []int{0}}}}
	f.Apply(&raft.Log{Index: 1, Data: EncodeLivePlan(p)})
	got, ok := f.LivePlan()
	if !ok || got.ID != 7 || len(got.Members) != 1 {
		t.Fatalf("LivePlan = %+v, %v", got, ok)
	}
	if EntryLivePlan&Ignorable == 0 {
		t.Error("the live plan entry must be ignorable: older replicas skip it")
	}
}

// The live plan travels in snapshots: a replica restored from one
// continues the plan (its id and window start) instead of starting over.
func TestLivePlanInSnapshot(t *testing.T) {
	plan := wire.LivePlan{ID: 7, Start: time.Unix(1_800_000_000, 0).UTC(), RatePerHCA: 50, GroupRate: 1, Window: 10 * time.Second,
		ProbesPerWindow: 5, Members: []wire.LiveMember{{Name: "a", Group: "leaf-1", Rails: []int{0},
			Addrs: []wire.LiveAddr{{Node: "a", Device: "mlx5_0", QPN: 9, QKey: 0x11111111}}}}}
	for _, withPlan := range []bool{true, false} {
		f := New(5, nil)
		f.Apply(entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning},
			Spec: sweep.Spec{Params: probe.DefaultTestParams()}, Nodes: []matrix.Node{{Name: "a"}, {Name: "b"}}}))
		if withPlan {
			f.Apply(&raft.Log{Data: EncodeLivePlan(plan)})
		}
		g := New(5, nil)
		if withPlan {
			g.Apply(&raft.Log{Data: EncodeLivePlan(wire.LivePlan{ID: 99})}) // a restore replaces whatever was there
		}
		restoreInto(t, f, g)
		got, ok := g.LivePlan()
		if ok != withPlan || (withPlan && !reflect.DeepEqual(got, plan)) {
			t.Fatalf("with plan %v: restored %v %+v", withPlan, ok, got)
		}
		if _, ok := g.sweepData("s1"); !ok {
			t.Fatal("the sweep did not survive")
		}
	}
}
