package fabric

import (
	"context"
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
}

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
func ProberOf(f Fabric) Prober {
	if p, ok := f.(Prober); ok {
		return p
	}
	if u, ok := f.(interface{ unwrap() any }); ok {
		if p, ok := u.unwrap().(Prober); ok {
			return p
		}
	}
	return nil
}

// PollAnswers is ProbePort.Poll over a port's queue of answers: what is
// queued first, even when ctx has ended (a poller draining with an ended
// context still gets what arrived), else it waits for one or for ctx.
func PollAnswers(ctx context.Context, q <-chan Answer, buf []Answer) (int, error) {
	if len(buf) == 0 {
		return 0, nil
	}
	select {
	case a := <-q:
		buf[0] = a
	default:
		select {
		case a := <-q:
			buf[0] = a
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	n := 1
	for n < len(buf) {
		select {
		case a := <-q:
			buf[n] = a
			n++
		default:
			return n, nil
		}
	}
	return n, nil
}
