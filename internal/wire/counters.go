package wire

import "github.com/rdmamesh/rdmamesh/internal/counters"

// RoundCounters is what the ports' counters moved by during one round, for
// the ports whose counters moved: a round of a healthy fabric has none and
// is never written. The coordinator commits it after the round's cells, as
// an entry of its own that a replica which does not know it may skip (the
// counters are evidence for the causes, not state the verdicts need).
type RoundCounters struct {
	SweepID string
	Round   int
	Ports   []PortCounts
}

// PortCounts is one port's counter counts: the port is Node's HCA on Rail
// (the sweep's node table names its device and port number).
type PortCounts struct {
	Node   string
	Rail   int
	Counts []counters.Count
}

// RoundCountersMsg is the round counters' codec.
var RoundCountersMsg = &Codec[RoundCounters]{name: "round counters", version: 1,
	put: func(w *writer, rc *RoundCounters) {
		w.str(rc.SweepID)
		w.int(rc.Round)
		putList(w, rc.Ports, (*writer).portCounts)
	},
	get: func(r *reader, rc *RoundCounters) {
		rc.SweepID, rc.Round = r.str(), r.int()
		rc.Ports = getList(r, (*reader).portCounts)
	}}

// SweepCounters is one sweep's summed counters in a snapshot: each port's
// counts over the sweep, the first round a counter moved in, and the
// rounds already summed (a round's entry applies once).
type SweepCounters struct {
	SweepID string
	Ports   []SweepPortCounts
	Rounds  []int // ascending
}

// SweepPortCounts is one port's sum over a sweep.
type SweepPortCounts struct {
	PortCounts
	FromRound int
}

var sweepCountersMsg = &Codec[SweepCounters]{name: "snapshot sweep counters", version: 1,
	put: func(w *writer, sc *SweepCounters) {
		w.str(sc.SweepID)
		putList(w, sc.Ports, func(w *writer, p *SweepPortCounts) {
			w.portCounts(&p.PortCounts)
			w.int(p.FromRound)
		})
		w.ints(sc.Rounds)
	},
	get: func(r *reader, sc *SweepCounters) {
		sc.SweepID = r.str()
		sc.Ports = getList(r, func(r *reader, p *SweepPortCounts) {
			r.portCounts(&p.PortCounts)
			p.FromRound = r.int()
		})
		sc.Rounds = r.ints()
	}}

func (w *writer) portCounts(p *PortCounts) {
	w.str(p.Node)
	w.int(p.Rail)
	w.counts(p.Counts)
}

func (r *reader) portCounts(p *PortCounts) {
	p.Node, p.Rail = r.str(), r.int()
	p.Counts = r.counts()
}

// counts writes a count list (a healthy rail's is nil: one byte).
func (w *writer) counts(cs []counters.Count) {
	putList(w, cs, func(w *writer, c *counters.Count) {
		w.u64(uint64(c.Index))
		w.u64(c.N)
	})
}

// counts is a list read directly, not through getList (see reader.error).
func (r *reader) counts() []counters.Count {
	n, ok := r.count()
	if !ok {
		return nil
	}
	out := make([]counters.Count, n)
	for k := range out {
		if r.err != nil {
			break
		}
		i := r.u64()
		if i > 0xff {
			r.fail()
		}
		out[k].Index, out[k].N = uint8(i), r.u64()
	}
	return out
}
