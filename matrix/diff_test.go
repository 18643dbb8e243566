package matrix

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func TestDiff(t *testing.T) {
	before := newFixture(6, 2)
	before.touching("node-02", 0, fail(probe.ClassPortDown, "down", "")) // repaired since
	old := before.build()

	after := newFixture(6, 2)
	after.touching("node-05", 1, slow(4)) // new problem
	after.nodes = append(after.nodes, Node{Name: "node-07", State: "alive"})
	now := after.build()

	// node-05 rail 1: 10 cells ok -> slow; node-02 rail 0: 10 failed ->
	// ok; node-07's 24 untested cells are new, not changed.
	d := Diff(old, now)
	worse := map[Verdict]int{}
	for _, c := range d.Worse {
		worse[c.New]++
		if c.Old != VerdictOK || c.Reason == "" {
			t.Fatalf("worse cell %+v", c)
		}
	}
	if worse[VerdictSlowLatency] != 10 || len(d.Worse) != 10 {
		t.Fatalf("worse: %v (%d)", worse, len(d.Worse))
	}
	for _, c := range d.Better {
		if c.Old != VerdictFailed || c.New != VerdictOK || c.NewP50Ns == 0 || c.OldP50Ns != 0 {
			t.Fatalf("better cell %+v", c)
		}
	}
	if len(d.Better) != 10 {
		t.Fatalf("%d better", len(d.Better))
	}
	if len(d.NewSuspects) != 2 || len(d.ClearedSuspects) != 1 || d.ClearedSuspects[0].Node != "node-02" {
		t.Fatalf("new %+v\ncleared %+v", d.NewSuspects, d.ClearedSuspects)
	}
	if strings.Join(d.AddedNodes, ",") != "node-07" || len(d.RemovedNodes) != 0 || !d.Changed() {
		t.Fatalf("nodes +%v -%v", d.AddedNodes, d.RemovedNodes)
	}
	text := d.Text()
	for _, want := range []string{
		"diff: 6 nodes, 60 cells, UNHEALTHY -> 7 nodes, 84 cells, UNHEALTHY",
		"cells: 10 worse, 10 better",
		"new suspect: hca node-05/mlx5_1 (rail 1): slow-latency in 10/10 cells",
		"cleared suspect: hca node-02/mlx5_0 (rail 0)",
		"worse: rail 1 node-01 -> node-05: ok -> slow-latency (p50",
		"better: rail 0 node-01 -> node-02: failed -> ok",
		"nodes added: node-07",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	var buf bytes.Buffer
	if err := d.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back DiffReport
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || len(back.Worse) != 10 || back.SchemaVersion != SchemaVersion {
		t.Fatalf("json: %v %+v", err, back.Old)
	}
}

func TestDiffSameSweep(t *testing.T) {
	m := newFixture(4, 1).build()
	d := Diff(m, m)
	if d.Changed() || !strings.Contains(d.Text(), "no change") {
		t.Fatalf("diff of a sweep with itself:\n%s", d.Text())
	}
	var buf bytes.Buffer
	if err := d.WriteJSON(&buf); err != nil || !strings.Contains(buf.String(), `"worse": []`) {
		t.Fatalf("empty lists must be [] not null: %v\n%s", err, buf.String())
	}
}

// A hand-edited JSON whose cells are out of order still diffs by key.
func TestDiffUnsortedCells(t *testing.T) {
	f := newFixture(5, 2)
	old := f.build()
	f.touching("node-03", 1, fail(probe.ClassTimeout, "t", ""))
	now := f.build()
	rand.New(rand.NewSource(3)).Shuffle(len(now.Cells), func(i, j int) { now.Cells[i], now.Cells[j] = now.Cells[j], now.Cells[i] })
	if d := Diff(old, now); len(d.Worse) != 8 || len(d.Better) != 0 {
		t.Fatalf("worse %d better %d", len(d.Worse), len(d.Better))
	}
}
