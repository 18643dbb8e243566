package worker

import (
	"sync"

	"github.com/rdmamesh/rdmamesh/internal/counters"
	"github.com/rdmamesh/rdmamesh/internal/fabric"
)

// counterBook keeps each port's last counter snapshot, so that what a
// test's traffic met is the difference between two readings. A port's
// tests never overlap in time on the initiator side, but a port can answer
// a peer's test while it runs its own: the delta then covers both, which
// is what the port saw, and the coordinator adds deltas up per HCA.
type counterBook struct {
	r    fabric.CounterReader
	mu   sync.Mutex
	last map[portKey]counters.Snapshot
}

type portKey struct {
	device string
	port   int
}

func newCounterBook(r fabric.CounterReader) *counterBook {
	if r == nil {
		return nil
	}
	return &counterBook{r: r, last: map[portKey]counters.Snapshot{}}
}

// since reads the port and returns what moved since the previous reading
// (nothing on the first, which only sets the baseline): ok is false when
// there is no reading to compare or the port cannot be read.
func (b *counterBook) since(device string, port int) (counters.Delta, bool) {
	if b == nil {
		return counters.Delta{}, false
	}
	now, err := b.r.Counters(device, port)
	if err != nil {
		return counters.Delta{}, false
	}
	k := portKey{device, port}
	b.mu.Lock()
	prev, had := b.last[k]
	b.last[k] = now
	b.mu.Unlock()
	if !had {
		return counters.Delta{}, false
	}
	d, err := counters.Diff(prev, now)
	return d, err == nil
}
