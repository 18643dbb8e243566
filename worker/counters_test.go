package worker

import (
	"errors"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/counters"
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
