package coordinator

import (
	"slices"
	"sync"

	"github.com/rdmamesh/rdmamesh/coordinator/store"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// roundCounts gathers the counter counts that a round's task results
// carry, until the round is committed: the counts then go to raft as an
// entry of their own (store.EntryRoundCounters), after the round's cells.
// Only ports whose counters moved are kept, so on a healthy fabric this
// holds nothing and no entry is written.
type roundCounts struct {
	mu sync.Mutex
	m  map[roundKey][]wire.PortCounts
}

type roundKey struct {
	sweep string
	round int
}

// note keeps what node's rails counted in round. The rails are the
// dispatcher's reused scratch: the counts are copied.
func (rc *roundCounts) note(sweep string, round int, node string, rails []wire.RailResult) {
	var add []wire.PortCounts
	for i := range rails {
		if len(rails[i].Counts) > 0 {
			add = append(add, wire.PortCounts{Node: node, Rail: rails[i].Rail, Counts: slices.Clone(rails[i].Counts)})
		}
	}
	if len(add) == 0 {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.m == nil {
		rc.m = map[roundKey][]wire.PortCounts{}
	}
	k := roundKey{sweep, round}
	rc.m[k] = append(rc.m[k], add...)
}

// take removes and returns round's counts.
func (rc *roundCounts) take(sweep string, round int) []wire.PortCounts {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	k := roundKey{sweep, round}
	out := rc.m[k]
	delete(rc.m, k)
	return out
}

// drop forgets a sweep's counts (it ended, or this replica lost the lead
// before committing them).
func (rc *roundCounts) drop(sweep string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for k := range rc.m {
		if k.sweep == sweep {
			delete(rc.m, k)
		}
	}
}

// commitCounts commits round's counts, if any. A failure loses evidence,
// never cells: it is logged and the sweep goes on.
func (c *Coordinator) commitCounts(sweep string, round int) {
	ports := c.counts.take(sweep, round)
	if len(ports) == 0 {
		return
	}
	if err := c.apply(store.EncodeRoundCounters(wire.RoundCounters{SweepID: sweep, Round: round, Ports: ports})); err != nil {
		c.log.Warn("could not commit a round's port counters; the causes will quote less", "sweep", sweep, "round", round, "err", err)
	}
}
