package cabling

import (
	"context"
	"strings"
	"testing"
)

// The rig's check on a small tree with a fixed seed: every injected
// miscabling named with its verdict, nothing else named, clean runs
// silent; with ports the analysis has to learn too.
func TestRandomMiscablings(t *testing.T) {
	for _, ports := range []string{"swp", "sonic"} {
		cfg := Config{Tree: "nodes=256,rails=4,leaf=16,spines=4,pods=2,cores=8", Runs: 30, CleanRuns: 5, Seed: 7, Ports: ports}
		res, err := Measure(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		// A swap gives two findings, every other fault one.
		if res.Expected != cfg.Runs*(len(Kinds)+1) || res.Right != res.Expected || res.Wrong+res.Missed+res.False != 0 {
			t.Errorf("%s: expected %d, right %d, wrong %d, missed %d, false %d:\n%s", ports, res.Expected, res.Right, res.Wrong, res.Missed, res.False,
				strings.Join(res.Misses, "\n"))
		}
	}
}

func TestHeapGuard(t *testing.T) {
	cfg := Config{Tree: "nodes=64,rails=2,leaf=8,spines=4", Runs: 1, MaxHeap: 1 << 10}
	_, err := Measure(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "past the 0.00 GB limit (Config.MaxHeap, -max-heap-gb); run stopped") {
		t.Fatalf("a 1 kB heap limit: %v", err)
	}
}

// BenchmarkCheck is one analysis of a faulted 1,024 x 8 tree (the rig's
// command measures 16,384 x 8).
func BenchmarkCheck(b *testing.B) {
	cfg := Config{Tree: "nodes=1024,rails=8,leaf=32,spines=16"}
	f, err := build(cfg)
	if err != nil {
		b.Fatal(err)
	}
	obs, _, err := f.inject(newRand(1, 0))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		_ = checkOnce(f, obs)
	}
}
