package scale

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestRunSmall runs the harness end to end on a handful of nodes, so `make
// bench` cannot rot between the (manual) scale runs.
func TestRunSmall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := Run(ctx, Config{Nodes: 6, LatencyIters: 20, Payload: true, DataDir: t.TempDir(), Reader: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Run(ctx, Config{Nodes: 6, Control: true, DataDir: t.TempDir()})
	if err != nil || c.Cells != r.Cells || !c.Control || c.WorkerTasks != 0 || r.WorkerTasks == 0 {
		t.Fatalf("control mode: %v, %d cells, %d task halves run by workers (full mode: %d)", err, c.Cells, c.WorkerTasks, r.WorkerTasks)
	}
	// Control mode's tasks go over task streams, as on a network; full
	// mode's workers run in-process and get their tasks posted.
	if c.Streams == 0 || r.Streams != 0 {
		t.Fatalf("%d task streams in control mode (want some), %d in full mode (want none)", c.Streams, r.Streams)
	}
	// Over loopback TCP the stand-ins answer on the workers' own listeners.
	tcp, err := Run(ctx, Config{Nodes: 6, Control: true, TCP: true, DataDir: t.TempDir()})
	if err != nil || tcp.Cells != r.Cells || !tcp.TCP || !tcp.Healthy || tcp.WorkerTasks != 0 || tcp.Streams == 0 {
		t.Fatalf("control mode over TCP: %v, %d cells, healthy %v, %d task halves run by workers, %d task streams", err, tcp.Cells, tcp.Healthy, tcp.WorkerTasks, tcp.Streams)
	}
	if want := 6 * 5 * 8; r.Cells != want || r.Rounds != 5 || r.Rails != 8 || !r.Healthy {
		t.Fatalf("cells %d (want %d), rounds %d, rails %d, healthy %v", r.Cells, want, r.Rounds, r.Rails, r.Healthy)
	}
	if r.ReaderPolls == 0 || r.ReaderMatrices == 0 || r.ReaderMatrices > r.ReaderPolls {
		t.Fatalf("live reader: %d polls, %d analyses", r.ReaderPolls, r.ReaderMatrices)
	}
	if r.RaftLogBytes <= 0 || r.SnapshotBytes <= 0 || r.MatrixJSON <= 0 || r.UIFirstPaint <= 0 || r.Overhead.Median <= 0 {
		t.Fatalf("missing figures: %+v", r)
	}
	var b strings.Builder
	Table(&b, []Result{Median([]Result{r, r, r})})
	if !strings.Contains(b.String(), "| full | all-pairs | 6 | 8 | 240 | 5 | – |") {
		t.Fatalf("table:\n%s", b.String())
	}
	// A fabric sweep on a tree laid over the workers: the pairs in each
	// leaf and the steered link tests, every link covered.
	f, err := Run(ctx, Config{Nodes: 6, Control: true, DataDir: t.TempDir(), Pattern: "fabric", Tree: "leaf=2,spines=2"})
	if err != nil || f.Links == 0 || f.LinksCovered != f.Links || f.Cells >= r.Cells || !f.Healthy {
		t.Fatalf("fabric: %v, %d cells, %d of %d links covered, healthy %v", err, f.Cells, f.LinksCovered, f.Links, f.Healthy)
	}
}
