package sweep

import (
	"sync"
	"time"
)

// committer commits a sweep's rounds on a goroutine of its own, so that
// encoding round r and waiting for raft (an fsync on the leader, the FSM
// applying 8,184 cells at 1,024 nodes) overlaps with dispatching the next
// rounds instead of adding to it. It holds at most commitDepth rounds (one
// being committed, the rest waiting): submit blocks while it is full, so a
// leader never runs more than commitDepth rounds ahead of its log, and
// commits stay in round order. A round whose commit fails, and those after
// it, are re-run by the next leader, like any uncommitted round.
type committer struct {
	e    *Engine
	in   chan pendingRound
	done chan struct{}

	mu     sync.Mutex
	err    error
	stalls map[int]time.Duration // by round: how long its submit waited
}

// commitDepth is how many dispatched rounds may wait for or be in their
// commit. With one, the next round's dispatch stopped whenever a commit ran
// long, and the two cores sat partly idle while the commit waited for its
// fsync: at 4,096 nodes the sweep used 1.68 of 2 cores. Two let dispatch
// run on through such a wait; a new leader re-runs at most two rounds.
const commitDepth = 2

type pendingRound struct {
	r        RoundResult
	dispatch time.Duration
}

func (e *Engine) startCommitter() *committer {
	k := &committer{e: e, in: make(chan pendingRound, commitDepth-1), done: make(chan struct{})}
	go k.loop()
	return k
}

func (k *committer) loop() {
	defer close(k.done)
	for p := range k.in {
		if k.failed() != nil {
			continue // drain: the sweep stops at its next check
		}
		t := time.Now()
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
				Stall: k.stallOf(p.r.Round), Commit: time.Since(t), Bytes: size})
		}
	}
}

func (k *committer) failed() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}

// submit hands a dispatched round over, waiting while the committer holds
// commitDepth rounds.
func (k *committer) submit(r RoundResult, dispatch time.Duration) {
	t := time.Now()
	k.in <- pendingRound{r: r, dispatch: dispatch}
	// Known only once the round is handed over; its commit, which reads
	// it at the end (stallOf), has only just begun.
	if d := time.Since(t); d > 0 {
		k.mu.Lock()
		if k.stalls == nil {
			k.stalls = map[int]time.Duration{}
		}
		k.stalls[r.Round] = d
		k.mu.Unlock()
	}
}

// stallOf is how long submit waited to hand round over (0 if not known).
func (k *committer) stallOf(round int) time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	d := k.stalls[round]
	delete(k.stalls, round)
	return d
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
// FSM applied it), which overlaps the next rounds' dispatch; Stall is how
// long handing this round to the committer waited because it already held
// commitDepth rounds: how long the next round's start was held up.
type RoundTiming struct {
	SweepID  string
	Round    int
	Cells    int
	Dispatch time.Duration
	Commit   time.Duration
	Stall    time.Duration
	Bytes    int // the committed entry's size
}
