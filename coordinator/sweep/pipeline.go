package sweep

import (
	"sync"
	"time"
)

// committer commits a sweep's rounds in two stages of their own, so that
// neither adds to the dispatch of the next round: one goroutine encodes
// round r (Committer.CommitRound, which hands the entry to raft) while
// another waits for round r-1 to be applied (an fsync on the leader, the
// FSM applying its cells). A round's space is free again once it is
// encoded, so the dispatcher waits only on the encoder: submit blocks
// until it has taken the previous round. A leader thus runs at most two
// rounds ahead of its log, and a round whose commit fails is re-run by the
// next leader, like any uncommitted round. With one stage doing both, a
// 4,096-node round's commit (encoding, then raft's fsync and the FSM) is
// as long as the dispatch it overlaps, and the two cores sit idle a fifth
// of the rounds' time.
type committer struct {
	e        *Engine
	in       chan pendingRound
	applying chan encodedRound
	done     chan struct{}

	mu  sync.Mutex
	err error
}

type pendingRound struct {
	r          RoundResult
	dispatch   time.Duration
	dispatched time.Time // when dispatch ended
}

// encodedRound is a round handed to raft, and what its timing needs (not
// its cells: their space is the dispatcher's again).
type encodedRound struct {
	sweepID      string
	round, cells int
	wait         func() (int, error)
	start        time.Time // when its encoding began
	dispatch     time.Duration
	stall        time.Duration
}

func (e *Engine) startCommitter() *committer {
	k := &committer{e: e, in: make(chan pendingRound), applying: make(chan encodedRound), done: make(chan struct{})}
	go k.encode()
	go k.apply()
	return k
}

// encode is the first stage: each round's entry, handed to raft in order.
func (k *committer) encode() {
	defer close(k.applying)
	for p := range k.in {
		t := time.Now()
		// The dispatcher waited for us if we took this round after its
		// dispatch ended.
		stall := max(0, t.Sub(p.dispatched))
		if k.failed() != nil {
			continue // drain: the sweep stops at its next check
		}
		wait := k.e.Commit.CommitRound(p.r)
		k.applying <- encodedRound{sweepID: p.r.SweepID, round: p.r.Round, cells: len(p.r.Cells) + len(p.r.Lite), wait: wait, start: t,
			dispatch: p.dispatch, stall: stall}
	}
}

// apply is the second stage: it waits for each round to be applied.
func (k *committer) apply() {
	defer close(k.done)
	for a := range k.applying {
		size, err := a.wait()
		if err != nil {
			k.e.log().Warn("cannot commit round; the next leader resumes it", "sweep", a.sweepID, "round", a.round, "err", err)
			k.mu.Lock()
			if k.err == nil {
				k.err = err
			}
			k.mu.Unlock()
			continue
		}
		if k.e.OnRound != nil {
			k.e.OnRound(RoundTiming{SweepID: a.sweepID, Round: a.round, Cells: a.cells, Dispatch: a.dispatch,
				Stall: a.stall, Commit: time.Since(a.start), Bytes: size})
		}
	}
}

func (k *committer) failed() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}

// submit hands a dispatched round over, waiting while the previous one is
// still being encoded.
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
// the first task sent to the last answer in; Commit is from the start of
// CommitRound until the round was applied (on the coordinator: encoding
// the round's raft entry, then raft.Apply until the FSM applied it), which
// overlaps the next rounds' dispatch; Stall is how long the dispatcher
// waited, after this round, for the encoder to take it.
type RoundTiming struct {
	SweepID  string
	Round    int
	Cells    int
	Dispatch time.Duration
	Commit   time.Duration
	Stall    time.Duration
	Bytes    int // the committed entry's size
}
