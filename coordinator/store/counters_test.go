package store

import (
	"bytes"
	"io"
	"reflect"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/counters"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/matrix"
)

func countersFSM(t *testing.T) *FSM {
	t.Helper()
	f := New(5, nil)
	ports := []probe.Port{{Device: "mlx5_0", Port: 1}, {Device: "mlx5_1", Port: 1}}
	f.Apply(entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning},
		Spec: sweep.Spec{Params: probe.DefaultTestParams()}, Nodes: []matrix.Node{{Name: "a", Ports: ports}, {Name: "b", Ports: ports}}}))
	return f
}

func applyCounts(f *FSM, round int, ports ...wire.PortCounts) {
	f.Apply(&raft.Log{Data: EncodeRoundCounters(wire.RoundCounters{SweepID: "s1", Round: round, Ports: ports})})
}

func nodeCounters(t *testing.T, f *FSM) map[string][]matrix.PortCounters {
	t.Helper()
	v, ok := f.Meta("s1")
	if !ok {
		t.Fatal("no sweep s1")
	}
	out := map[string][]matrix.PortCounters{}
	for _, n := range v.Nodes {
		if n.Counters != nil {
			out[n.Name] = n.Counters
		}
	}
	return out
}

// restoreInto restores to what f's snapshot holds.
func restoreInto(t *testing.T, f, to *FSM) {
	t.Helper()
	if err := to.Restore(io.NopCloser(bytes.NewReader(snapshotBytes(t, f)))); err != nil {
		t.Fatal(err)
	}
}

func TestRoundCountersSumPerPort(t *testing.T) {
	f := countersFSM(t)
	before, _ := f.Version("s1")
	applyCounts(f, 3, wire.PortCounts{Node: "b", Rail: 1, Counts: []counters.Count{{Index: 4, N: 100}}})
	if v, _ := f.Version("s1"); v == before {
		t.Fatal("counters changed what the analysis reads but not the sweep's version (a cached matrix would not quote them)")
	}
	applyCounts(f, 5, wire.PortCounts{Node: "b", Rail: 1, Counts: []counters.Count{{Index: 4, N: 20}, {Index: 6, N: 3}}},
		wire.PortCounts{Node: "a", Rail: 0, Counts: []counters.Count{{Index: 1, N: 7}}})
	// A leader that retried round 5's entry: it applies once.
	applyCounts(f, 5, wire.PortCounts{Node: "b", Rail: 1, Counts: []counters.Count{{Index: 4, N: 20}}})
	// A sweep this replica does not hold is no error.
	f.Apply(&raft.Log{Data: EncodeRoundCounters(wire.RoundCounters{SweepID: "gone", Round: 1})})

	want := map[string][]matrix.PortCounters{
		"a": {{Rail: 0, Device: "mlx5_0", Port: 1, Counts: []counters.Count{{Index: 1, N: 7}}, FromRound: 5}},
		"b": {{Rail: 1, Device: "mlx5_1", Port: 1, Counts: []counters.Count{{Index: 4, N: 120}, {Index: 6, N: 3}}, FromRound: 3}},
	}
	if got := nodeCounters(t, f); !reflect.DeepEqual(got, want) {
		t.Fatalf("node counters\n got %+v\nwant %+v", got, want)
	}

	// A snapshot keeps them, and a restored replica still applies a
	// round's entry once.
	g := New(5, nil)
	restoreInto(t, f, g)
	applyCounts(g, 3, wire.PortCounts{Node: "b", Rail: 1, Counts: []counters.Count{{Index: 4, N: 100}}})
	if got := nodeCounters(t, g); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored node counters\n got %+v\nwant %+v", got, want)
	}
}

// An FSM that does not know the entry (an older replica) skips it: the
// entry type carries the ignorable bit.
func TestRoundCountersAreIgnorable(t *testing.T) {
	if EntryRoundCounters&Ignorable == 0 {
		t.Fatal("round counters must be ignorable: the verdicts never read them")
	}
	f := countersFSM(t)
	saved := handlers[EntryRoundCounters]
	delete(handlers, EntryRoundCounters)
	defer func() { handlers[EntryRoundCounters] = saved }()
	applyCounts(f, 1, wire.PortCounts{Node: "a", Rail: 0, Counts: []counters.Count{{Index: 1, N: 7}}})
	if got := nodeCounters(t, f); len(got) != 0 {
		t.Fatalf("skipped entry left counters: %+v", got)
	}
}
