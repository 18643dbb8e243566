package fabric

import (
	"context"
	"sync"
	"time"
)

// Prober is a Fabric that can run the always-on mesh's probes (package
// liveplan): small unreliable-datagram messages that the peer's port
// answers, so one QP per port reaches every peer without a connection to
// each. It is optional: a fabric without it simply does no live probing.
type Prober interface {
	OpenProbe(ctx context.Context, device string, port int) (ProbePort, error)
}

// ProbeAddr is what a peer needs to send probes to a port: its node and
// device (for the simulated fabric and for messages), its GID or LID, and
// its UD queue pair and Q_Key. The coordinator hands these out in the live
// plan.
type ProbeAddr struct {
	Node   string `json:"node"`
	Device string `json:"device"`
	GID    string `json:"gid,omitempty"` // RoCE, or IB across subnets
	LID    uint16 `json:"lid,omitempty"` // IB
	QPN    uint32 `json:"qpn"`
	QKey   uint32 `json:"qkey"`
	// FlowLabel, set on a send, is the IPv6 flow label the probe carries
	// (RoCE; 0: none): the switches hash the UDP source port it makes, so
	// a link flow of the live plan takes the path that was planned for it.
	// It is the send's, not the port's: the plan's addresses have none.
	FlowLabel uint32 `json:"flow_label,omitempty"`
}

// A probe's sequence number carries its flow label in its top 20 bits
// (SeqFlowLabel), so the answering port can send the answer back with the
// same label, over the path the plan chose for the way back: RoCE v2 over
// IPv4 carries no flow label on the wire, only the UDP source port the
// sender made of it.
const FlowLabelShift = 44

// FlowLabelMask is a flow label's 20 bits.
const FlowLabelMask = 1<<20 - 1

// SeqFlowLabel is the flow label probe seq was sent with (0: none).
func SeqFlowLabel(seq uint64) uint32 { return uint32(seq >> FlowLabelShift) }

// Answer is a peer's reply to one of our probes, with the round trip the
// port measured (send to receive completion).
type Answer struct {
	Seq  uint64
	From ProbeAddr
	RTT  time.Duration
}

// ProbePort is one port's probe QP. It answers peers' probes by itself for
// as long as it is open. Send and Poll may run in different goroutines;
// each is used by one goroutine at a time.
type ProbePort interface {
	Addr() ProbeAddr
	// Send sends probe seq to a peer. It does not wait: a probe that
	// cannot be sent (no route, a full queue) is an error, which the
	// caller counts as a lost probe.
	Send(to ProbeAddr, seq uint64) error
	// Poll fills buf with answers received so far and returns how many,
	// waiting until at least one arrives or ctx ends.
	Poll(ctx context.Context, buf []Answer) (int, error)
	// Close stops answering and frees the QP; safe to call twice.
	Close() error
}

// ProberOf is f's Prober, looking through Adapt's wrapper: nil when the
// fabric has no probe ports.
func ProberOf(f Fabric) Prober { return provided[Prober](f) }

// provided is f as the optional interface T, looking through Adapt's
// wrapper to the provider behind it; the zero T when it is not one.
func provided[T any](f Fabric) T {
	if t, ok := f.(T); ok {
		return t
	}
	if u, ok := f.(interface{ unwrap() any }); ok {
		if t, ok := u.unwrap().(T); ok {
			return t
		}
	}
	var zero T
	return zero
}

// AnswerQueue holds a probe port's answers until Poll takes them. It
// grows only as answers wait, so thousands of idle ports (a 512-node
// simulated demo has 4,096) cost nothing until they probe, and it stops
// at a bound: a poller that falls behind loses answers (counted as lost
// probes), as a full CQ would. The zero value is not usable: NewAnswerQueue.
type AnswerQueue struct {
	max   int
	mu    sync.Mutex
	queue []Answer      // oldest first
	ready chan struct{} // a token when queue may have become non-empty
}

// NewAnswerQueue makes a queue holding at most max answers.
func NewAnswerQueue(max int) *AnswerQueue {
	return &AnswerQueue{max: max, ready: make(chan struct{}, 1)}
}

// Push queues an answer; false when the queue was full and it was lost.
func (q *AnswerQueue) Push(a Answer) bool {
	q.mu.Lock()
	ok := len(q.queue) < q.max
	if ok {
		q.queue = append(q.queue, a)
	}
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default: // a token is already waiting
	}
	return ok
}

// Poll is ProbePort.Poll over the queue: what is queued first, even when
// ctx has ended (a poller draining with an ended context still gets what
// arrived), else it waits for an answer or for ctx.
func (q *AnswerQueue) Poll(ctx context.Context, buf []Answer) (int, error) {
	if len(buf) == 0 {
		return 0, nil
	}
	for {
		q.mu.Lock()
		n := copy(buf, q.queue)
		q.queue = q.queue[:copy(q.queue, q.queue[n:])]
		q.mu.Unlock()
		if n > 0 {
			return n, nil
		}
		select {
		case <-q.ready:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}
