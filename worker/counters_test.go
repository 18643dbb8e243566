package worker

import (
	"errors"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/counters"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

type fakeCounters map[string]uint64 // device → local_ack_timeout_err

func (f fakeCounters) Counters(device string, port int) (counters.Snapshot, error) {
	n, ok := f[device]
	if !ok {
		return counters.Snapshot{}, errors.New("no such device")
	}
	return counters.Snapshot{Device: device, Port: port, Values: []counters.Value{
		{Def: counters.Def{Name: "local_ack_timeout_err", Dir: "hw_counters", Kind: counters.Timeout, Side: counters.Egress}, N: n}}}, nil
}

func TestCounterBook(t *testing.T) {
	f := fakeCounters{"mlx5_0": 100}
	b := newCounterBook(f)
	if _, ok := b.since("mlx5_0", 1); ok {
		t.Fatal("the first reading is only a baseline")
	}
	f["mlx5_0"] = 130
	d, ok := b.since("mlx5_0", 1)
	if !ok || d.Evidence().Total(counters.Timeout) != 30 {
		t.Fatalf("delta %+v ok=%v, want 30 timeouts", d, ok)
	}
	if d, ok := b.since("mlx5_0", 1); !ok || !d.Evidence().Empty() {
		t.Fatalf("nothing moved, got %+v ok=%v", d, ok)
	}
	if _, ok := b.since("mlx5_9", 1); ok {
		t.Fatal("an unreadable port gave a delta")
	}
	var none *counterBook
	if _, ok := none.since("mlx5_0", 1); ok || newCounterBook(nil) != nil {
		t.Fatal("a worker without counters reads nothing")
	}
}

func TestAttachCounts(t *testing.T) {
	f := fakeCounters{"mlx5_0": 100, "mlx5_1": 7}
	b := newCounterBook(f)
	b.since("mlx5_0", 1)
	b.since("mlx5_1", 1)
	f["mlx5_0"] = 160 // rail 0's port timed out 60 times; rail 1's moved nothing
	asked := []probe.RailPair{{Rail: 0, Src: probe.Endpoint{Device: "mlx5_0", Port: 1}},
		{Rail: 1, Src: probe.Endpoint{Device: "mlx5_1", Port: 1}}, {Rail: 2, Src: probe.Endpoint{Device: "mlx5_9", Port: 1}}}
	rails := []wire.RailResult{{Rail: 0}, {Rail: 1}, {Rail: 2}}
	b.attachCounts(rails, asked)
	d, err := counters.DeltaOf("mlx5_0", 1, rails[0].Counts)
	if err != nil || d.Evidence().Total(counters.Timeout) != 60 {
		t.Fatalf("rail 0: counts %+v (%v), want 60 timeouts", rails[0].Counts, err)
	}
	if rails[1].Counts != nil || rails[2].Counts != nil {
		t.Fatalf("a quiet port and an unreadable one carry counts: %+v, %+v", rails[1].Counts, rails[2].Counts)
	}
}
