package sweep

import (
	"sync"
	"time"
)

// committer commits a sweep's rounds on a goroutine of its own, so that
// encoding round r and waiting for raft (an fsync on the leader, the FSM
// applying 8,184 cells at 1,024 nodes) overlaps with dispatching round r+1
// instead of adding to it. At most one round is being committed while the
// next is dispatched: submit blocks until the previous commit is done, so
// a leader never runs more than one round ahead of its log. A round whose
// commit fails is re-run by the next leader, like any uncommitted round.
type committer struct {
	e    *Engine
	in   chan pendingRound
	done chan struct{}

	mu  sync.Mutex
	err error
}

type pendingRound struct {
	r          RoundResult
	dispatch   time.Duration
	dispatched time.Time // when dispatch ended
}

func (e *Engine) startCommitter() *committer {
	k := &committer{e: e, in: make(chan pendingRound), done: make(chan struct{})}
	go k.loop()
	return k
}

func (k *committer) loop() {
	defer close(k.done)
	var prevDone time.Time
	for p := range k.in {
		if k.failed() != nil {
			continue // drain: the sweep stops at its next check
		}
		t := time.Now()
		// The dispatcher waited for us if the previous commit ended after
		// this round's dispatch did.
		stall := max(0, prevDone.Sub(p.dispatched))
		size, err := k.e.Commit.CommitRound(p.r)
		if err != nil {
			k.e.log().Warn("cannot commit round; the next leader resumes it", "sweep", p.r.SweepID, "round", p.r.Round, "err", err)
			k.mu.Lock()
			k.err = err
			k.mu.Unlock()
			continue
		}
		if k.e.OnRound != nil {
			k.e.OnRound(RoundTiming{SweepID: p.r.SweepID, Round: p.r.Round, Cells: len(p.r.Cells), Dispatch: p.dispatch,
				Stall: stall, Commit: time.Since(t), Bytes: size})
		}
		prevDone = time.Now()
	}
}

func (k *committer) failed() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}

// submit hands a dispatched round over, waiting while the previous one is
// still being committed.
func (k *committer) submit(r RoundResult, dispatch time.Duration) {
	k.in <- pendingRound{r: r, dispatch: dispatch, dispatched: time.Now()}
}

// finish waits for every submitted round and returns the first failure.
func (k *committer) finish() error {
	close(k.in)
	<-k.done
	return k.failed()
}

// RoundTiming is what one committed round cost the leader. Dispatch is from
// the first task sent to the last answer in; Commit is CommitRound (on the
// coordinator: encoding the round's raft entry plus raft.Apply until the
// FSM applied it), which overlaps the next round's dispatch; Stall is how
// long that next round could not start because this commit was still
// running.
type RoundTiming struct {
	SweepID  string
	Round    int
	Cells    int
	Dispatch time.Duration
	Commit   time.Duration
	Stall    time.Duration
	Bytes    int // the committed entry's size
}
