package liveplan

import (
	"math"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
)

// Summary is one target's probing over one window: what a worker reports
// instead of raw samples, so the coordinator's cost does not grow with the
// probe rate or with time.
type Summary struct {
	Node string `json:"node"` // the target
	Rail int    `json:"rail"`
	// Label is a link flow's flow label (Target.Label); 0 for the
	// group and rotation probes.
	Label uint32 `json:"label,omitempty"`
	// InGroup: the target shares the prober's switch group (its leaf), so
	// the probes crossed the two HCAs' own cables and that leaf only.
	InGroup bool `json:"in_group,omitempty"`
	// Window is the rotation window the probes were sent in.
	Window int64 `json:"window"`
	Sent   int   `json:"sent"`
	// Answered counts probes answered before they were declared lost;
	// Lost those that were not; Late answers that came after that.
	Answered int `json:"answered"`
	Lost     int `json:"lost"`
	Late     int `json:"late,omitempty"`
	// OutOfOrder counts answers to an older probe after a newer one's.
	OutOfOrder int     `json:"out_of_order,omitempty"`
	P50Ns      float64 `json:"p50_ns,omitempty"`
	P99Ns      float64 `json:"p99_ns,omitempty"`
	MaxNs      float64 `json:"max_ns,omitempty"`
	// Held: a sweep's test used the HCA during the window and probing
	// paused, so the figures cover only part of it.
	Held bool `json:"held,omitempty"`
	// LocalDown is the prober's own port refusing to send (down, or its
	// device gone) during the window: the error's cause and fix. Lost
	// probes alone cannot tell a dead sender from a dead path.
	LocalDown    string `json:"local_down,omitempty"`
	LocalDownFix string `json:"local_down_fix,omitempty"`
}

// LossRatio is Lost over the probes whose fate is known.
func (s Summary) LossRatio() float64 {
	if n := s.Answered + s.Lost; n > 0 {
		return float64(s.Lost) / float64(n)
	}
	return 0
}

// maxOutstanding bounds the probes one target may have in flight: a target
// gets a few probes a second (at most the HCA's whole cap, 50/s, when it is
// the only one), so within a 2 s loss timeout a handful are out; a peer
// that stops answering costs a fixed ring, not a growing map. A probe
// pushed out of a full ring counts as lost. Trackers are per target and a
// 1,024-node plan gives an HCA ~70 targets, so the ring is kept small.
const maxOutstanding = 64

// rttBuckets is a log-scale histogram from 1 µs to ~1 min (16 buckets a
// decade): percentiles within ~7%, in 128 counters instead of samples.
const (
	rttBuckets    = 128
	bucketsPerDec = 16
	minRTTNs      = 1e3
)

// Tracker accounts one target's probes: it matches answers to sends by
// sequence number, declares probes lost after a timeout, and turns a window
// into a Summary. Not safe for concurrent use; one per target.
type Tracker struct {
	node    string
	rail    int
	label   uint32
	base    uint64 // the label, in the sequence numbers' top bits
	timeout time.Duration

	next    uint64                // next sequence number to send
	head    uint64                // oldest sequence number that may still be pending
	sent    [maxOutstanding]int64 // UnixNano, a third of a time.Time
	pending [maxOutstanding]bool
	highest uint64 // highest sequence answered, +1 (0 = none yet)
	hist    [rttBuckets]uint32
	cur     Summary
}

// NewTracker tracks probes to node on rail; a probe unanswered after
// timeout is lost.
func NewTracker(node string, rail int, timeout time.Duration) *Tracker {
	return &Tracker{node: node, rail: rail, timeout: timeout}
}

// NewFlowTracker tracks a link flow's probes: its sequence numbers carry
// label in their top 20 bits (fabric.FlowLabelShift), so the answers to a
// node's link flow and to its group or rotation probes (same peer, same
// port) are told apart by the number the peer echoes back, and the peer
// answers with the label, with nothing added to the probe. 2^44 probes
// is half a million years at a probe a microsecond.
func NewFlowTracker(node string, rail int, label uint32, timeout time.Duration) *Tracker {
	return &Tracker{node: node, rail: rail, label: label, base: uint64(label) << fabric.FlowLabelShift, timeout: timeout}
}

// Send records a probe sent now and returns its sequence number. A probe
// still pending in the ring slot it reuses is counted lost: it has been
// outstanding for maxOutstanding sends.
func (t *Tracker) Send(now time.Time) uint64 {
	seq := t.base | t.next
	t.next++
	slot := seq % maxOutstanding
	if t.pending[slot] {
		t.cur.Lost++
	}
	t.sent[slot], t.pending[slot] = now.UnixNano(), true
	t.cur.Sent++
	return seq
}

// Answer records the answer to probe seq with the round trip the port
// measured (its send and receive completions, closer to the wire than any
// clock here).
func (t *Tracker) Answer(seq uint64, rtt time.Duration) {
	if seq>>fabric.FlowLabelShift != t.base>>fabric.FlowLabelShift {
		return // another flow's
	}
	seq &^= t.base
	if seq >= t.next || t.next-seq > maxOutstanding {
		return // not ours, or long forgotten
	}
	slot := seq % maxOutstanding
	if !t.pending[slot] {
		t.cur.Late++ // already declared lost, or a duplicate
		return
	}
	t.pending[slot] = false
	t.cur.Answered++
	if seq+1 < t.highest {
		t.cur.OutOfOrder++
	}
	t.highest = max(t.highest, seq+1)
	ns := float64(rtt.Nanoseconds())
	t.hist[bucket(ns)]++
	t.cur.MaxNs = max(t.cur.MaxNs, ns)
}

// Expire declares lost every probe older than the timeout at now. Probes
// are sent in sequence order, so it walks from the oldest pending one and
// stops at the first that is still in time: amortised O(1) a call, which
// matters when a host runs hundreds of trackers ticking 50 times a second.
func (t *Tracker) Expire(now time.Time) {
	if t.next-t.head > maxOutstanding {
		t.head = t.next - maxOutstanding // older slots were reused by Send
	}
	for ; t.head < t.next; t.head++ {
		slot := t.head % maxOutstanding
		if !t.pending[slot] {
			continue
		}
		if now.UnixNano()-t.sent[slot] <= int64(t.timeout) {
			return
		}
		t.pending[slot] = false
		t.cur.Lost++
	}
}

// Flush ends the window: it returns the window's summary and starts the
// next. Probes still in flight carry over and count in the window that
// settles them.
func (t *Tracker) Flush(window int64) Summary {
	s := t.cur
	s.Node, s.Rail, s.Label, s.Window = t.node, t.rail, t.label, window
	s.P50Ns, s.P99Ns = t.quantile(0.5), t.quantile(0.99)
	t.cur, t.hist = Summary{}, [rttBuckets]uint32{}
	return s
}

func bucket(ns float64) int {
	if ns <= minRTTNs {
		return 0
	}
	b := int(math.Log10(ns/minRTTNs) * bucketsPerDec)
	return min(b, rttBuckets-1)
}

// quantile is the upper edge of the bucket holding the q-th answer, so it
// errs on the slow side, never hiding a tail.
func (t *Tracker) quantile(q float64) float64 {
	total := uint32(0)
	for _, c := range t.hist {
		total += c
	}
	if total == 0 {
		return 0
	}
	rank := uint32(math.Ceil(q * float64(total)))
	seen := uint32(0)
	for b, c := range t.hist {
		seen += c
		if seen >= rank {
			return min(minRTTNs*math.Pow(10, float64(b+1)/bucketsPerDec), t.cur.MaxNs)
		}
	}
	return t.cur.MaxNs
}
