package scale

import (
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// observer turns worker task reports and coordinator round reports into
// per-round control overhead: the round's wall time (its dispatch, plus any
// time the next round waited for this one's commit) minus its slowest
// pair's test time, where a pair's test time is the sum of its two
// directions' RunTask time as the initiating workers measured it (the
// directions run one after the other).
type observer struct {
	mu       sync.Mutex
	work     map[int]map[[2]string]time.Duration // round → pair → test time
	dispatch []time.Duration
	commit   []time.Duration
	overhead []time.Duration
	bytes    []time.Duration // entry sizes, as a Duration so dist() serves both
	tasks    int             // task halves the simulated workers ran themselves
}

func newObserver() *observer { return &observer{work: map[int]map[[2]string]time.Duration{}} }

// task is worker.Options.OnTask.
func (o *observer) task(r wire.TaskResult) {
	k := [2]string{r.Src, r.Dst}
	if k[1] < k[0] {
		k[0], k[1] = k[1], k[0]
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.tasks++
	m := o.work[r.Round]
	if m == nil {
		m = map[[2]string]time.Duration{}
		o.work[r.Round] = m
	}
	m[k] += r.Elapsed
}

// round is coordinator.Options.OnRound.
func (o *observer) round(t coordinator.RoundTiming) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var slowest time.Duration
	for _, d := range o.work[t.Round] {
		slowest = max(slowest, d)
	}
	delete(o.work, t.Round)
	o.dispatch = append(o.dispatch, t.Dispatch)
	o.commit = append(o.commit, t.Commit)
	o.overhead = append(o.overhead, max(0, t.Dispatch+t.Stall-slowest))
	o.bytes = append(o.bytes, time.Duration(t.Bytes))
}

func (o *observer) dists() (dispatch, commit, overhead, bytes Dist) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return dist(o.dispatch), dist(o.commit), dist(o.overhead), dist(o.bytes)
}

// ran is how many task halves the simulated workers ran themselves: none
// when stand-ins answered every task (control mode).
func (o *observer) ran() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.tasks
}
