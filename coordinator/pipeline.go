package coordinator

import (
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/store"
	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
)

// committer commits a sweep's rounds on a goroutine of its own, so that
// encoding round r and waiting for raft (an fsync on the leader, the FSM
// applying 8,184 cells at 1,024 nodes) overlaps with dispatching round r+1
// instead of adding to it. At most one round is being committed while the
// next is dispatched: submit blocks until the previous commit is done, so
// a leader never runs more than one round ahead of its log. A round whose
// commit fails is re-run by the next leader, like any uncommitted round.
type committer struct {
	c     *Coordinator
	index *store.NodeIndex
	in    chan pendingRound
	done  chan struct{}

	mu  sync.Mutex
	err error
}

type pendingRound struct {
	r          sweep.RoundResult
	dispatch   time.Duration
	dispatched time.Time // when dispatch ended
}

func (c *Coordinator) startCommitter(index *store.NodeIndex) *committer {
	k := &committer{c: c, index: index, in: make(chan pendingRound), done: make(chan struct{})}
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
		size, err := k.c.commitRound(k.index, p.r)
		if err != nil {
			k.c.log.Warn("cannot commit round; the next leader resumes it", "sweep", p.r.SweepID, "round", p.r.Round, "err", err)
			k.mu.Lock()
			k.err = err
			k.mu.Unlock()
			continue
		}
		if k.c.opts.OnRound != nil {
			k.c.opts.OnRound(RoundTiming{SweepID: p.r.SweepID, Round: p.r.Round, Cells: len(p.r.Cells), Dispatch: p.dispatch,
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
func (k *committer) submit(r sweep.RoundResult, dispatch time.Duration) {
	k.in <- pendingRound{r: r, dispatch: dispatch, dispatched: time.Now()}
}

// finish waits for every submitted round and returns the first failure.
func (k *committer) finish() error {
	close(k.in)
	<-k.done
	return k.failed()
}

// commitRound commits a round's cells, compactly when they fit the grid,
// and says how many bytes the entry took.
func (c *Coordinator) commitRound(x *store.NodeIndex, r sweep.RoundResult) (int, error) {
	b, err := store.EncodeRound(x, r)
	if err != nil {
		return 0, err
	}
	return len(b), c.raft.Apply(b, 10*time.Second).Error()
}
