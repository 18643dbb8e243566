package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// keptRoundCells is randomCells with what else reaches a round entry:
// classes beyond what a class byte holds (classes > MaxClasses makes cells
// go whole), cells off the grid, cells without figures, bandwidth alone,
// rounds other than the entry's and cells that carry attempts.
func keptRoundCells(rng *rand.Rand, nodes []matrix.Node, round, classes int) []matrix.Cell {
	cells := randomCells(rng, nodes, round)
	other := 1
	for i := range cells {
		c := &cells[i]
		switch rng.IntN(40) {
		case 0:
			c.DstRail = &other // cross-rail
		case 1:
			c.Src = "elsewhere"
		case 2:
			c.SrcDevice = "mlx5_9"
		case 3:
			c.Latency, c.Bandwidth = nil, nil
		case 4:
			c.Latency = nil
			c.Bandwidth = &probe.Bandwidth{Gbps: rng.Float64() * 400, MsgRate: 1e6, Bytes: rng.Int64N(1 << 30), Duration: rng.Float64()}
		case 5:
			c.Round = rng.IntN(round + 1)
		case 6:
			c.Round = 70000 // no grid round code holds it
		case 7:
			c.Retests = []matrix.Attempt{{Round: round, Class: probe.ClassTimeout, Error: &probe.Error{Class: probe.ClassTimeout, Cause: "slow"}}}
		}
		if rng.IntN(3) == 0 {
			c.Class = probe.Class(fmt.Sprintf("class%d", rng.IntN(classes)))
		}
	}
	return cells
}

// keptPair is a leader applying its own entries through the kept codes and
// a follower decoding the same entries' bytes.
type keptPair struct {
	t                *testing.T
	x                NodeIndex
	leader, follower *FSM
}

func (p *keptPair) apply(r sweep.RoundResult) {
	p.t.Helper()
	b, err := p.leader.EncodeOwnRound(&p.x, r)
	if err != nil {
		p.t.Fatal(err)
	}
	p.leader.Apply(&raft.Log{Data: b})
	if p.leader.kept.len() != 0 {
		p.t.Fatalf("round %d: the leader decoded its own entry", r.Round)
	}
	// What a follower gets: the same bytes, another slice. (That they are
	// EncodeRound's bytes is TestFinishKeepMatchesDecode's in internal/wire.)
	p.follower.Apply(&raft.Log{Data: bytes.Clone(b)})
}

func (p *keptPair) both(l *raft.Log) {
	p.leader.Apply(l)
	p.follower.Apply(l)
}

// The same rounds applied from the kept codes and from the decoded bytes
// must leave identical stores: the same cells read back, the same
// snapshot to the byte.
func TestKeptRoundsApplyAsDecoded(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range 12 {
		nodes := gridNodes(3+rng.IntN(5), 1+rng.IntN(3))
		classes := []int{2, 5, 80}[trial%3] // 80: more than the store's class table holds
		id := fmt.Sprintf("s%d", trial)
		p := keptPair{t: t, x: NewNodeIndex(nodes), leader: New(3, nil), follower: New(3, nil)}
		p.both(entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: id, State: api.SweepRunning, Rounds: 3}, Nodes: nodes}))
		for round := range 3 {
			p.apply(sweep.RoundResult{SweepID: id, Round: round, Cells: keptRoundCells(rng, nodes, round, classes)})
		}
		// A confirmation pass: its round merges attempts into the cells.
		plan := sweep.RetestPlan{SweepID: id, Pass: 1, Pairs: 1,
			Rounds: []scheduler.Round{{Index: 3, Pairs: []scheduler.Pair{{A: nodes[0].Name, B: nodes[1].Name}}}}}
		p.both(entry(t, EntryRetestPlan, plan))
		retest := keptRoundCells(rng, nodes, 3, classes)
		p.apply(sweep.RoundResult{SweepID: id, Round: 3, Cells: retest[:len(retest)/2]})
		p.apply(sweep.RoundResult{SweepID: id, Round: 1, Cells: keptRoundCells(rng, nodes, 1, classes)}) // a replay: ignored

		got, _ := p.leader.sweepData(id)
		want, _ := p.follower.sweepData(id)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: the leader's store differs from the follower's:\n leader %+v\n follower %+v", trial, got.Info, want.Info)
		}
		if a, b := snapshotBytes(t, p.leader), snapshotBytes(t, p.follower); !bytes.Equal(a, b) {
			t.Fatalf("trial %d: snapshots differ (%d and %d bytes)", trial, len(a), len(b))
		}
	}
}

// Only the registered slice itself takes the kept codes: a copy of its
// bytes (what a follower or a replay holds) is decoded and leaves the
// registration alone. Entries never applied do not pile up.
func TestKeptRoundsOnlyTheOwnEntry(t *testing.T) {
	nodes := gridNodes(4, 2)
	x := NewNodeIndex(nodes)
	f := New(1, nil)
	f.Apply(entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s", State: api.SweepRunning}, Nodes: nodes}))
	rng := rand.New(rand.NewPCG(1, 2))
	var own [][]byte
	for round := range 3 * maxKept {
		b, err := f.EncodeOwnRound(&x, sweep.RoundResult{SweepID: "s", Round: round, Cells: randomCells(rng, nodes, round)})
		if err != nil {
			t.Fatal(err)
		}
		own = append(own, b)
		if n := f.kept.len(); n != min(round+1, maxKept) {
			t.Fatalf("%d entries registered, %d kept", round+1, n)
		}
	}
	last := own[len(own)-1]
	f.Apply(&raft.Log{Data: bytes.Clone(last)})
	if f.kept.len() != maxKept {
		t.Fatal("a copy of a registered entry took its kept codes")
	}
	f.Apply(&raft.Log{Data: own[0]}) // evicted long ago: decoded
	if f.kept.len() != maxKept {
		t.Fatal("an evicted entry was found")
	}
	f.Apply(&raft.Log{Data: last})
	if f.kept.len() != maxKept-1 {
		t.Fatal("the registered entry was not taken")
	}
	if sv, _ := f.sweepData("s"); sv.Info.RoundsDone != 2 {
		t.Fatalf("%d rounds done, want 2", sv.Info.RoundsDone)
	}
}
