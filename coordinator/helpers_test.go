package coordinator

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/coordinator/store"
	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// entry is one raft log entry: a store.Start, End or sweep.RoundResult
// (its cells kept whole; the FSM puts them where they fit).
func entry(t *testing.T, v any) *raft.Log {
	t.Helper()
	var b []byte
	switch v := v.(type) {
	case store.Start:
		var err error
		if b, err = store.EncodeStart(v); err != nil {
			t.Fatal(err)
		}
	case store.End:
		b = store.EncodeEnd(v)
	case sweep.RoundResult:
		var err error
		if b, err = store.EncodeRound(nil, v); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("no entry for a %T", v)
	}
	return &raft.Log{Index: 1, Data: b}
}

func okCell(src, dst string, rail int) matrix.Cell {
	return matrix.Cell{Src: src, Dst: dst, Rail: rail, Class: probe.ClassOK, Latency: &probe.Latency{P50Ns: 1000}}
}

// benchSweep is an all-pairs sweep of n nodes with 8 usable rails each.
func benchSweep(b *testing.B, n int) ([]matrix.Node, []scheduler.Round) {
	b.Helper()
	nodes := make([]matrix.Node, n)
	names := make([]string, n)
	for i := range nodes {
		nodes[i].Name = fmt.Sprintf("n%03d", i)
		names[i] = nodes[i].Name
		for r := 0; r < 8; r++ {
			nodes[i].Ports = append(nodes[i].Ports, probe.Port{Device: fmt.Sprintf("mlx5_%d", r), Port: 1, Rail: r, Usable: true})
		}
	}
	rounds, err := scheduler.AllPairs(names)
	if err != nil {
		b.Fatal(err)
	}
	return nodes, rounds
}

// track is inflight.begin with the task's context made at once, for tests
// that watch the context itself.
func (f *inflight) track(ctx context.Context, timeout time.Duration, a, b string) (context.Context, taskRef) {
	r := f.begin(ctx, timeout, a, b)
	return r.context(), r
}
