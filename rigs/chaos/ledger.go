package chaos

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// ledger records every task the fleet answered, per sweep: which cells got
// an answer (and which attempt each answer was), and when each task was
// sent. A finished sweep's matrix is checked against it cell by cell
// (verify), and a leader kill's resume point is read from it (resume).
//
// Each ok answer carries its attempt number in Latency.Samples (the test's
// iterations plus the attempt; sample counts are stored exactly), so the
// matrix tells which answer it kept.
type ledger struct {
	idx         map[string]int // node name → index
	n, rails    int
	pairTimeout time.Duration // tasks carry Deadline = sent + 0.9 x this

	mu     sync.Mutex
	sweeps map[string]*sweepLedger
}

type sweepLedger struct {
	mu    sync.Mutex
	iters int
	// Per cell (src*n + dst)*rails + rail: answers given, and a bit per
	// attempt (up to 8) that was answered ok.
	answers []uint8
	okBits  []uint8
	tasks   []taskRec
}

// taskRec is one task as the fleet received it.
type taskRec struct {
	round int32
	conn  connKey // the connection it came on (socketOwners)
	sent  int64   // unix ns, from the task's deadline
}

func newLedger(names []string, rails int, pairTimeout time.Duration) *ledger {
	l := &ledger{idx: map[string]int{}, n: len(names), rails: rails, pairTimeout: pairTimeout, sweeps: map[string]*sweepLedger{}}
	for i, n := range names {
		l.idx[n] = i
	}
	return l
}

func (l *ledger) sweep(id string) *sweepLedger {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.sweeps[id]
	if !ok {
		s = &sweepLedger{answers: make([]uint8, l.n*l.n*l.rails), okBits: make([]uint8, l.n*l.n*l.rails)}
		l.sweeps[id] = s
	}
	return s
}

// drop forgets a verified sweep.
func (l *ledger) drop(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.sweeps, id)
}

func (l *ledger) cell(src, dst, rail int) int { return (src*l.n+dst)*l.rails + rail }

// answer records res, the answer to t, and tags its ok rails with their
// attempt number (in place: call it before encoding res).
func (l *ledger) answer(t wire.Task, res wire.TaskResult, conn connKey) {
	s := l.sweep(t.SweepID)
	si, ok1 := l.idx[t.Src]
	di, ok2 := l.idx[t.Dst]
	s.mu.Lock()
	defer s.mu.Unlock()
	s.iters = t.Params.LatencyIters
	s.tasks = append(s.tasks, taskRec{round: int32(t.Round), conn: conn, sent: t.Deadline.UnixNano() - int64(l.pairTimeout*9/10)})
	if !ok1 || !ok2 {
		return
	}
	for i := range res.Rails {
		rr := &res.Rails[i]
		if rr.Rail < 0 || rr.Rail >= l.rails {
			continue
		}
		k := l.cell(si, di, rr.Rail)
		attempt := s.answers[k]
		if attempt < 255 {
			s.answers[k]++
		}
		if rr.Class == probe.ClassOK && rr.Latency != nil && attempt < 8 {
			rr.Latency.Samples = s.iters + int(attempt)
			s.okBits[k] |= 1 << attempt
		}
	}
}

// check is a finished sweep's matrix compared with the plan and with what
// the fleet answered.
type check struct {
	tally
	phantom  int // ok cells whose figures no worker gave for that cell
	unseen   int // cells a worker answered that the matrix does not list
	peerLost int // peer-lost cells, all involving a killed worker
	badLost  int // peer-lost cells of two live workers
}

func (c check) String() string {
	s := c.tally.String()
	if c.phantom+c.unseen+c.badLost > 0 {
		s += fmt.Sprintf(", %d not answered by a worker, %d answered but missing, %d peer-lost between live workers", c.phantom, c.unseen, c.badLost)
	}
	return s
}

func (c check) clean() bool {
	return c.lost == 0 && c.dup == 0 && c.phantom == 0 && c.unseen == 0 && c.badLost == 0
}

// verifier checks a streamed matrix cell by cell.
type verifier struct {
	l      *ledger
	s      *sweepLedger
	killed map[int]bool // workers killed during the sweep
	seen   []bool
	c      check
}

func (l *ledger) verifier(id string, killed map[int]bool) *verifier {
	s := l.sweep(id)
	return &verifier{l: l, s: s, killed: killed, seen: make([]bool, len(s.answers)), c: check{tally: tally{classes: map[string]int{}}}}
}

func (v *verifier) add(c *matrixCell) {
	si, ok1 := v.l.idx[c.Src]
	di, ok2 := v.l.idx[c.Dst]
	if !ok1 || !ok2 || c.Rail < 0 || c.Rail >= v.l.rails || si == di {
		v.c.dup++ // not a cell of this sweep's plan: counted as an extra
		return
	}
	k := v.l.cell(si, di, c.Rail)
	if v.seen[k] {
		v.c.dup++
		return
	}
	v.seen[k] = true
	if c.Verdict == "untested" || c.Class == "" {
		return
	}
	v.c.unique++
	v.c.classes[c.Class]++
	v.s.mu.Lock()
	okBits := v.s.okBits[k]
	iters := v.s.iters
	v.s.mu.Unlock()
	switch c.Class {
	case string(probe.ClassOK):
		tag := -1
		if c.Latency != nil {
			tag = c.Latency.Samples - iters
		}
		if tag < 0 || tag >= 8 || okBits&(1<<tag) == 0 {
			v.c.phantom++
		}
	case string(probe.ClassPeerLost):
		v.c.peerLost++
		if !v.killed[si] && !v.killed[di] {
			v.c.badLost++
		}
	}
}

// finish completes the check against info, the sweep as the coordinator
// reports it.
func (v *verifier) finish(expected, cellsDone int) check {
	v.c.expected = expected
	v.c.lost = max(0, expected-v.c.unique)
	v.c.dup += max(0, cellsDone-expected)
	v.s.mu.Lock()
	defer v.s.mu.Unlock()
	for k, n := range v.s.answers {
		if n > 0 && !v.seen[k] {
			v.c.unseen++
		}
	}
	return v.c
}

// resume is where a new leader picked a sweep up from the old one, from
// the tasks the fleet answered: which rounds only the old leader ran (it
// committed them), which the new one ran, and when the new one's first
// task was sent.
type resume struct {
	lastCommitted int           // highest round only the old leader ran (-1: none)
	firstResumed  int           // lowest round the new leader dispatched (-1: none)
	rerun         int           // rounds both ran: dispatched, not committed before the failover
	rerunDone     int           // rounds the new leader ran that were already committed (must be 0)
	dispatchAfter time.Duration // fault → the new leader's first task
	unknown       int           // tasks whose sender could not be told
}

// resumedRight says whether the new leader resumed where it should: at
// the first round the old one left uncommitted, or nowhere when the old
// one had committed every one of the sweep's rounds (a kill after the
// last round, before the sweep's end).
func (r resume) resumedRight(rounds int) bool {
	return r.firstResumed == r.lastCommitted+1 || r.firstResumed == -1 && r.lastCommitted == rounds-1
}

func (r resume) String() string {
	s := fmt.Sprintf("committed through round %d, resumed at round %d (%d uncommitted re-run, %d committed re-run)",
		r.lastCommitted, r.firstResumed, r.rerun, r.rerunDone)
	if r.unknown > 0 {
		s += fmt.Sprintf(", %d tasks of unknown sender", r.unknown)
	}
	return s
}

// sender classifies a task: 1 the new leader, 0 the old one, -1 unknown.
type sender func(taskRec) int

// afterKill tells the leaders apart by the moment the old one was killed:
// a process reaped by then sends nothing later.
func afterKill(killed time.Time) sender {
	at := killed.UnixNano()
	return func(t taskRec) int {
		if t.sent >= at {
			return 1
		}
		return 0
	}
}

// byPort tells them apart by the sending socket, for a partition where
// both stay alive.
func byConn(owners map[connKey]string, newLeader string) sender {
	return func(t taskRec) int {
		switch o, ok := owners[t.conn]; {
		case !ok:
			return -1
		case o == newLeader:
			return 1
		}
		return 0
	}
}

func (l *ledger) resume(id string, fault time.Time, who sender) resume {
	s := l.sweep(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	old, neu := map[int32]bool{}, map[int32]bool{}
	first := int64(-1)
	r := resume{lastCommitted: -1, firstResumed: -1}
	for _, t := range s.tasks {
		switch who(t) {
		case 0:
			old[t.round] = true
		case 1:
			neu[t.round] = true
			if first < 0 || t.sent < first {
				first = t.sent
			}
		default:
			r.unknown++
		}
	}
	for rd := range old {
		if !neu[rd] {
			r.lastCommitted = max(r.lastCommitted, int(rd))
		} else {
			r.rerun++
		}
	}
	var rounds []int
	for rd := range neu {
		rounds = append(rounds, int(rd))
	}
	slices.Sort(rounds)
	if len(rounds) > 0 {
		r.firstResumed = rounds[0]
	}
	for _, rd := range rounds {
		if rd <= r.lastCommitted {
			r.rerunDone++
		}
	}
	if first >= 0 {
		r.dispatchAfter = time.Duration(first - fault.UnixNano())
	}
	return r
}
