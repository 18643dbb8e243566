package worker

import (
	"sync"

	"github.com/rdmamesh/rdmamesh/internal/counters"
	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
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

// attachCounts gives each rail result what its initiating port's counters
// moved by since their previous reading: the test just run, plus anything
// the port answered for peers since its last test. Read after the rails
// finished, so a rail's delta never covers another of this task's rails
// (rails use distinct HCAs), and all at once: a port's snapshot is some
// 40 sysfs files (BenchmarkReadPort: about 0.15 ms), and eight of them in
// a row would lengthen every task. A port that cannot be read, or moved
// nothing, gets no counts.
func (b *counterBook) attachCounts(rails []wire.RailResult, asked []probe.RailPair) {
	if b == nil {
		return
	}
	var wg sync.WaitGroup
	for i := range rails {
		if i >= len(asked) || asked[i].Src.Device == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if d, ok := b.since(asked[i].Src.Device, asked[i].Src.Port); ok {
				rails[i].Counts = d.Counts()
			}
		}()
	}
	wg.Wait()
}
