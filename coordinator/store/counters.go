package store

import (
	"cmp"
	"slices"

	"github.com/rdmamesh/rdmamesh/internal/counters"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// EntryRoundCounters is one round's counter counts (wire.RoundCountersMsg).
// It is ignorable: the counters explain causes, the verdicts never read
// them, so a replica that skips the entry judges the same cells the same
// way and only quotes less.
const EntryRoundCounters = Ignorable | 6

// EncodeRoundCounters is the entry of one round's counters.
func EncodeRoundCounters(rc wire.RoundCounters) []byte {
	return wire.RoundCountersMsg.Append([]byte{byte(EntryRoundCounters)}, &rc)
}

// sweepCounters sums a sweep's round counters per port. It is small: only
// ports whose counters moved have an entry, so a healthy sweep has none.
type sweepCounters struct {
	ports  map[portKey]*portSum
	rounds map[int]bool // rounds summed: a leader that retries an entry adds it once
}

type portKey struct {
	node string
	rail int
}

type portSum struct {
	counts    []counters.Count
	fromRound int
}

func (f *FSM) applyRoundCounters(b []byte) error {
	rc, err := wire.RoundCountersMsg.Decode(b)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	rec, ok := f.sweeps[rc.SweepID]
	if !ok {
		return nil
	}
	if rec.counters == nil {
		rec.counters = &sweepCounters{ports: map[portKey]*portSum{}, rounds: map[int]bool{}}
	}
	sc := rec.counters
	if sc.rounds[rc.Round] {
		return nil
	}
	sc.rounds[rc.Round] = true
	for _, p := range rc.Ports {
		if len(p.Counts) == 0 {
			continue
		}
		k := portKey{p.Node, p.Rail}
		s := sc.ports[k]
		if s == nil {
			s = &portSum{fromRound: rc.Round}
			sc.ports[k] = s
		}
		s.counts = counters.AddCounts(s.counts, p.Counts)
		s.fromRound = min(s.fromRound, rc.Round)
	}
	// What the analysis reads changed: a cached matrix must be rebuilt.
	f.seq++
	rec.Version = f.seq
	return nil
}

// portCounters is what the matrix quotes of nodes[i]: each of its ports'
// sums, in rail order. The device and port number come from the sweep's
// node table; a rail it does not list (never, from this store) is skipped.
func (sc *sweepCounters) portCounters(n wire.Node) []matrix.PortCounters {
	if sc == nil {
		return nil
	}
	var out []matrix.PortCounters
	for k, s := range sc.ports {
		if k.node != n.Name || k.rail < 0 || k.rail >= len(n.Ports) {
			continue
		}
		p := n.Ports[k.rail]
		out = append(out, matrix.PortCounters{Rail: k.rail, Device: p.Device, Port: p.Port,
			Counts: slices.Clone(s.counts), FromRound: s.fromRound})
	}
	slices.SortFunc(out, func(a, b matrix.PortCounters) int { return cmp.Compare(a.Rail, b.Rail) })
	return out
}

// withCounters sets each node's counters; nodes is nodesOut's copy.
func (sc *sweepCounters) withCounters(nodes []matrix.Node, in []wire.Node) []matrix.Node {
	if sc == nil || len(sc.ports) == 0 {
		return nodes
	}
	for i := range nodes {
		nodes[i].Counters = sc.portCounters(in[i])
	}
	return nodes
}

// snapshot is the sweep's counters as a snapshot keeps them; ok is false
// when there are none.
func (sc *sweepCounters) snapshot(id string) (wire.SweepCounters, bool) {
	if sc == nil {
		return wire.SweepCounters{}, false
	}
	out := wire.SweepCounters{SweepID: id}
	for k, s := range sc.ports {
		out.Ports = append(out.Ports, wire.SweepPortCounts{PortCounts: wire.PortCounts{Node: k.node, Rail: k.rail,
			Counts: slices.Clone(s.counts)}, FromRound: s.fromRound})
	}
	slices.SortFunc(out.Ports, func(a, b wire.SweepPortCounts) int {
		return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.Rail, b.Rail))
	})
	for r := range sc.rounds {
		out.Rounds = append(out.Rounds, r)
	}
	slices.Sort(out.Rounds)
	return out, true
}

// restoreCounters rebuilds a sweep's counters from a snapshot.
func restoreCounters(in wire.SweepCounters) *sweepCounters {
	sc := &sweepCounters{ports: map[portKey]*portSum{}, rounds: map[int]bool{}}
	for _, p := range in.Ports {
		sc.ports[portKey{p.Node, p.Rail}] = &portSum{counts: p.Counts, fromRound: p.FromRound}
	}
	for _, r := range in.Rounds {
		sc.rounds[r] = true
	}
	return sc
}
