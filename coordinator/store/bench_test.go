package store

import (
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// roundCells is one all-pairs round's cells at n nodes and 8 rails, as the
// leader collects them: n/2 pairs x 2 directions x 8 rails (8,192 at 1,024).
func roundCells(nodes []matrix.Node, rd scheduler.Round, rng *rand.Rand) []matrix.Cell {
	byName := map[string]matrix.Node{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	var out []matrix.Cell
	for _, p := range rd.Pairs {
		for _, dir := range [2][2]string{{p.A, p.B}, {p.B, p.A}} {
			for _, ph := range sweep.RailPhases(sweep.Spec{}, byName[dir[0]], byName[dir[1]]) {
				for _, rp := range ph {
					c := sweep.CellFor(dir[0], dir[1], rd.Index, rp)
					p50 := 1000 + 60*rng.Float64()
					c.Class = probe.ClassOK
					c.Latency = &probe.Latency{Samples: 1000, MinNs: p50 - 20, P50Ns: p50, P90Ns: p50 + 15, P99Ns: p50 + 80,
						P999Ns: p50 + 300, MaxNs: p50 + 900, StdevNs: 11 + rng.Float64()}
					out = append(out, c)
				}
			}
		}
	}
	return out
}

func benchSweep(b *testing.B, n int) ([]matrix.Node, []scheduler.Round) {
	b.Helper()
	nodes := gridNodes(n, 8)
	names := make([]string, n)
	for i := range nodes {
		names[i] = nodes[i].Name
	}
	rounds, err := scheduler.AllPairs(names)
	if err != nil {
		b.Fatal(err)
	}
	return nodes, rounds
}

// BenchmarkCodecRound encodes one 1,024-node round (8,184 cells) into its
// binary raft entry; bytes/entry is the log growth per round.
func BenchmarkCodecRound(b *testing.B) {
	nodes, rounds := benchSweep(b, 1024)
	x := NewNodeIndex(nodes)
	r := sweep.RoundResult{SweepID: "s", Round: 0, Cells: roundCells(nodes, rounds[0], rand.New(rand.NewPCG(1, 2)))}
	var size int
	b.ReportAllocs()
	for b.Loop() {
		e, err := EncodeRound(&x, r)
		if err != nil {
			b.Fatal(err)
		}
		size = len(e)
	}
	b.ReportMetric(float64(size), "bytes/entry")
	b.ReportMetric(float64(size)/float64(len(r.Cells)), "bytes/cell")
}

// BenchmarkApplyRound is the FSM applying one 1,024-node round batch (512
// pairs x 2 directions x 8 rails) from its binary entry, as every replica
// does once per round.
func BenchmarkApplyRound(b *testing.B) { benchApplyRound(b, false) }

// BenchmarkApplyRoundKept is the leader applying its own round entry from
// the codes its encoder kept (FSM.EncodeOwnRound): no inflating, no column
// decoding.
func BenchmarkApplyRoundKept(b *testing.B) { benchApplyRound(b, true) }

func benchApplyRound(b *testing.B, own bool) {
	b.Helper()
	nodes, rounds := benchSweep(b, 1024)
	x := NewNodeIndex(nodes)
	start := mustStart(b, Start{Info: api.SweepInfo{ID: "s", State: api.SweepRunning}, Nodes: nodes})
	rng := rand.New(rand.NewPCG(3, 4))
	results := make([]sweep.RoundResult, 16)
	entries := make([][]byte, len(results))
	var err error
	for i := range results {
		results[i] = sweep.RoundResult{SweepID: "s", Round: i, Cells: roundCells(nodes, rounds[i], rng)}
		if entries[i], err = EncodeRound(&x, results[i]); err != nil {
			b.Fatal(err)
		}
	}
	f := New(1, nil)
	f.Apply(&raft.Log{Data: start})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		// A fresh round index each time, so nothing is skipped as a replay.
		b.StopTimer()
		if i%len(entries) == 0 && i > 0 {
			f = New(1, nil)
			f.Apply(&raft.Log{Data: start})
		}
		e := entries[i%len(entries)]
		if own {
			if e, err = f.EncodeOwnRound(&x, results[i%len(results)]); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		f.Apply(&raft.Log{Data: e})
		i++
	}
	if f.kept.len() != 0 {
		b.Fatal("the leader's own entries were decoded")
	}
	b.ReportMetric(float64(len(rounds[0].Pairs)*2*8), "cells/op")
}

// BenchmarkSweepState1024 fills the FSM with a whole 1,024 x 8 sweep
// (BENCH_NODES, up to 4,096: about 3 GB there, and the cap keeps it far
// from this machine's 16 GB guard) and reports what the compact store
// holds, then times the analysis the API serves from it (matrix.Analyse
// over the grid, as Coordinator.Matrix runs it). Benchmark only: it needs
// GBs.
func BenchmarkSweepState1024(b *testing.B) {
	n := 1024
	if v := os.Getenv("BENCH_NODES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 2 || n > 4096 {
			b.Fatalf("BENCH_NODES=%q: want a node count from 2 to 4096", v)
		}
	}
	nodes, rounds := benchSweep(b, n)
	x := NewNodeIndex(nodes)
	f := New(1, nil)
	start := mustStart(b, Start{Info: api.SweepInfo{ID: "s", State: api.SweepRunning}, Nodes: nodes})
	f.Apply(&raft.Log{Data: start})
	rng := rand.New(rand.NewPCG(5, 6))
	before := liveHeap()
	fill := time.Now()
	var logBytes int
	for _, rd := range rounds {
		e, err := EncodeRound(&x, sweep.RoundResult{SweepID: "s", Round: rd.Index, Cells: roundCells(nodes, rd, rng)})
		if err != nil {
			b.Fatal(err)
		}
		logBytes += len(e)
		f.Apply(&raft.Log{Data: e})
	}
	took := time.Since(fill)
	store := liveHeap() - before
	b.ReportAllocs()
	b.ResetTimer()
	var m *matrix.Matrix
	for b.Loop() {
		sv, grid, _ := f.Grid("s") // as Coordinator.Matrix does
		m = matrix.Analyse(sv.Nodes, grid, grid.ExtraCells(), matrix.DefaultThresholds())
	}
	b.StopTimer()
	if m.NumCells() != n*(n-1)*8 {
		b.Fatalf("%d cells", m.NumCells())
	}
	b.ReportMetric(float64(store)/1e6, "store-MB")
	b.ReportMetric(took.Seconds(), "fill-s") // encoding and applying every round
	b.ReportMetric(float64(logBytes)/1e6, "log-MB")
	b.ReportMetric(float64(liveHeap()-before-store)/1e6, "matrix-MB")
	runtime.KeepAlive(m)
	runtime.KeepAlive(f)
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func mustStart(tb testing.TB, s Start) []byte {
	tb.Helper()
	b, err := EncodeStart(s)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
