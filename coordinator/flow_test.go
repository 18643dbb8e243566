package coordinator

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/coordinator/store"
	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

type bufSink struct{ bytes.Buffer }

func (s *bufSink) ID() string    { return "buf" }
func (s *bufSink) Cancel() error { return nil }
func (s *bufSink) Close() error  { return nil }

// Every worker-measured cell of a sweep reaches the matrix with the flow
// and back flow its worker reported, from the answers' bytes through the
// dispatch, the round entries (the leader's kept codes and a follower's
// decoding), a snapshot and a restore; cells no worker measured have
// none.
func TestSweepCellsCarryTheWorkersFlows(t *testing.T) {
	nodes, rounds, c := mixedSweep(t)
	spec := sweep.Spec{PairTimeout: time.Minute, RailMode: "all"}
	x := store.NewNodeIndex(nodes)
	f := store.New(5, nil)
	f.Apply(entry(t, store.Start{Info: api.SweepInfo{ID: "s", State: api.SweepRunning}, Nodes: nodes}))
	p := sweep.NewPool(0)
	defer p.Stop()
	lites := 0
	for i, rd := range rounds {
		cells, lite := p.Round(context.Background(), workerDispatch{c}, "s", &spec, sweep.NewNodes(nodes), rd)
		lites += len(lite)
		r := sweep.RoundResult{SweepID: "s", Round: rd.Index, Cells: cells, Lite: lite, Nodes: nodes}
		encode := store.EncodeRound
		if i%2 == 0 {
			encode = f.EncodeOwnRound
		}
		b, err := encode(&x, r)
		if err != nil {
			t.Fatal(err)
		}
		f.Apply(&raft.Log{Index: uint64(2 + i), Data: b})
	}
	if lites == 0 {
		t.Fatal("no lite cell in the sweep")
	}
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink bufSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	g := store.New(5, nil)
	if err := g.Restore(io.NopCloser(&sink.Buffer)); err != nil {
		t.Fatal(err)
	}
	for name, fsm := range map[string]*store.FSM{"leader": f, "restored": g} {
		sv, grid, _ := fsm.Grid("s")
		m := matrix.Analyse(sv.Nodes, grid, grid.ExtraCells(), matrix.DefaultThresholds())
		flowed, backed, cross := 0, 0, 0
		check := func(c *matrix.Cell) {
			dr := c.Rail
			if c.DstRail != nil {
				dr, cross = *c.DstRail, cross+1
			}
			want, wantBack := uint16(0), uint16(0)
			if c.Class == probe.ClassOK || c.Class == probe.ClassRetryExceeded { // what mixedWorker measured
				want, wantBack = mixFlow(c.Src, c.Dst, c.Rail, dr, c.Round), mixBackFlow(c.Src, c.Dst, c.Rail, dr, c.Round)
			}
			if c.Flow != want || c.BackFlow != wantBack {
				t.Fatalf("%s: %s→%s rail %d→%d (%s): flows %#x and %#x, want %#x and %#x", name, c.Src, c.Dst, c.Rail, dr, c.Class,
					c.Flow, c.BackFlow, want, wantBack)
			}
			if want != 0 {
				flowed++
			}
			if wantBack != 0 {
				backed++
			}
		}
		if err := m.EachCell(func(_ int, r *matrix.Result) error {
			check(&r.Cell)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for i := range m.Cross {
			check(&m.Cross[i].Cell)
		}
		if flowed == 0 || backed == 0 || cross == 0 {
			t.Fatalf("%s: %d cells with flows, %d with back flows, %d cross-rail: the sweep lost its cases", name, flowed, backed, cross)
		}
	}
}
