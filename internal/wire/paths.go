package wire

// SweepPaths are traced paths of one sweep's flows: after its rounds the
// leader has the workers trace the tests' 5-tuples hop by hop, and the
// analysis routes those cells over what was measured instead of over a
// model of the switches' hashing. A sweep may gather several (one per
// batch the leader traced).
type SweepPaths struct {
	SweepID string
	Flows   []FlowPath
}

// FlowPath is one traced flow of cell Src → Dst on Rail: the test's data
// flow, or with Back the responder's (its acknowledgements and pongs).
// Hops are the answering addresses by TTL from 1, "" for a hop that did
// not answer; Why says what was not learnt (a silent hop, the trace's
// error). The addresses, not the links they map to, are what is kept:
// the measurement stays true whatever the topology says.
type FlowPath struct {
	Src, Dst string
	Rail     int
	Back     bool
	Flow     int // the UDP source port traced
	Hops     []string
	Reached  bool
	Why      string
	// Loss is each hop's answers to repeated probes of the flow, when the
	// leader asked for hop loss (a bad cell's flows): sent and answered
	// by TTL from 1.
	Loss []HopLoss
}

// HopLoss is one TTL's probes and answers.
type HopLoss struct{ Sent, Answered int }

// PathsMsg is the traced-paths entry's codec.
var PathsMsg = &Codec[SweepPaths]{name: "paths", version: 2, oldest: 1,
	put: (*writer).sweepPaths,
	get: (*reader).sweepPaths}

// pathsStateMsg is the snapshot trailer's traced-paths section.
var pathsStateMsg = &Codec[[]SweepPaths]{name: "snapshot paths", version: 2, oldest: 1,
	put: func(w *writer, s *[]SweepPaths) { putList(w, *s, (*writer).sweepPaths) },
	get: func(r *reader, s *[]SweepPaths) { *s = getList(r, (*reader).sweepPaths) }}

func (w *writer) sweepPaths(p *SweepPaths) {
	w.str(p.SweepID)
	putList(w, p.Flows, func(w *writer, f *FlowPath) {
		w.str(f.Src)
		w.str(f.Dst)
		w.int(f.Rail)
		w.flag(f.Back)
		w.int(f.Flow)
		w.strs(f.Hops)
		w.flag(f.Reached)
		w.str(f.Why)
		putList(w, f.Loss, func(w *writer, h *HopLoss) {
			w.int(h.Sent)
			w.int(h.Answered)
		})
	})
}

func (r *reader) sweepPaths(p *SweepPaths) {
	p.SweepID = r.str()
	p.Flows = getList(r, func(r *reader, f *FlowPath) {
		*f = FlowPath{Src: r.str(), Dst: r.str(), Rail: r.int(), Back: r.flag(), Flow: r.int(), Hops: r.strs(),
			Reached: r.flag(), Why: r.str()}
		if r.ver >= 2 {
			f.Loss = getList(r, func(r *reader, h *HopLoss) { *h = HopLoss{Sent: r.int(), Answered: r.int()} })
		}
	})
}
