package sweep

import (
	"errors"
	"testing"
	"time"
)

// gatedCommitter records the order of its calls; each round's apply waits
// until the test opens its gate.
type gatedCommitter struct {
	events chan string
	gates  map[int]chan error
}

func (g *gatedCommitter) CommitRound(r RoundResult) func() (int, error) {
	g.events <- "encode " + string(rune('0'+r.Round))
	gate := g.gates[r.Round]
	return func() (int, error) {
		err := <-gate
		g.events <- "applied " + string(rune('0'+r.Round))
		return len(r.Cells), err
	}
}

func (g *gatedCommitter) CommitRetestPlan(RetestPlan) error            { return nil }
func (g *gatedCommitter) EndSweep(string, string, string, *bool) error { return nil }

// The committer encodes round r+1 while round r is still being applied,
// but takes round r+2 only once round r is applied: a leader runs at most
// two rounds ahead of its log. A failed apply is the committer's failure,
// and the rounds it takes after it are not encoded.
func TestCommitterEncodesAheadOfItsApplies(t *testing.T) {
	g := &gatedCommitter{events: make(chan string, 16), gates: map[int]chan error{}}
	for r := range 4 {
		g.gates[r] = make(chan error, 1)
	}
	k := (&Engine{Commit: g}).startCommitter()
	next := func(want string) {
		t.Helper()
		select {
		case got := <-g.events:
			if got != want {
				t.Fatalf("%s, want %s", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s", want)
		}
	}
	submitted := make(chan struct{})
	go func() {
		defer close(submitted)
		for r := range 4 {
			k.submit(RoundResult{SweepID: "s", Round: r}, 0)
		}
	}()
	next("encode 0")
	next("encode 1") // while round 0 waits for its apply
	g.gates[0] <- nil
	next("applied 0")
	next("encode 2") // only now: the encoder waited to hand round 1 over
	g.gates[1] <- errors.New("lost leadership")
	next("applied 1")
	g.gates[2] <- nil
	next("applied 2") // handed over before the failure was known
	<-submitted
	// Round 3 is drained, never handed to raft: nothing waits on its gate.
	finished := make(chan error, 1)
	go func() { finished <- k.finish() }()
	select {
	case err := <-finished:
		if err == nil {
			t.Fatal("a failed apply is not the committer's failure")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the committer did not finish: a round after the failure went to raft")
	}
	// Round 3 came after the failure: drained, never encoded.
	if len(g.events) != 0 {
		t.Fatalf("after the failure: %s", <-g.events)
	}
}
