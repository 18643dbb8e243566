package sim

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// probeSwitch is the simulated fabric's datagram network: the open probe
// ports by node and device. A probe reaches a port only while it is open,
// as a UD send to a closed QP vanishes.
type probeSwitch struct {
	mu    sync.Mutex
	ports map[[2]string]*ProbePort
}

func (s *probeSwitch) lookup(node, dev string) *ProbePort {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ports[[2]string{node, dev}]
}

// maxAnswers bounds the answers waiting for Poll (fabric.AnswerQueue).
const maxAnswers = 4096

// probeBytes is a probe's payload: a sequence number and a timestamp.
const probeBytes = 64

// ProbePort is a simulated probe QP (fabric.ProbePort).
type ProbePort struct {
	fab     *Fabric
	addr    fabric.ProbeAddr
	answers *fabric.AnswerQueue
	rng     *rand.Rand // Send's goroutine only
	once    sync.Once
}

// OpenProbe opens a probe port on one of this node's HCAs.
func (n *Node) OpenProbe(ctx context.Context, device string, port int) (fabric.ProbePort, error) {
	s := n.fab.spec
	if s.deviceIndex(device) < 0 {
		return nil, &probe.Error{Class: probe.ClassPortDown, Verb: "ibv_open_device",
			Cause: fmt.Sprintf("no HCA %s on %s (it has %s)", device, n.name, s.deviceRange()),
			Fix:   "probe the devices the node's inventory lists"}
	}
	if n.fab.Effects(n.name, device).Down {
		return nil, portDown(s, n.name, device)
	}
	p := &ProbePort{fab: n.fab,
		addr: fabric.ProbeAddr{Node: n.name, Device: device, QPN: uint32(hash64(n.fab.seed, "udqp", n.name, device) & 0xffffff),
			QKey: 0x11111111},
		answers: fabric.NewAnswerQueue(maxAnswers),
		rng:     rand.New(rand.NewSource(int64(hash64(n.fab.seed, "live", n.name, device))))}
	sw := &n.fab.live
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.ports == nil {
		sw.ports = map[[2]string]*ProbePort{}
	}
	key := [2]string{n.name, device}
	if old := sw.ports[key]; old != nil {
		return nil, &probe.Error{Class: probe.ClassInternal, Verb: "ibv_create_qp",
			Cause: fmt.Sprintf("a probe port is already open on %s %s", n.name, device),
			Fix:   "close it first: one probe QP per port"}
	}
	sw.ports[key] = p
	return p, nil
}

func (p *ProbePort) Addr() fabric.ProbeAddr { return p.addr }

// Send models the probe's trip and the answer's: lost at a down or dead
// end or link, lost with each end's loss probability on each of the two
// crossings and each link's on the way there and back (probeRoute),
// slowed by the worse end's latency factor, with an occasional tail.
func (p *ProbePort) Send(to fabric.ProbeAddr, seq uint64) error {
	f := p.fab
	near := f.Effects(p.addr.Node, p.addr.Device)
	if near.Down {
		return portDown(f.spec, p.addr.Node, p.addr.Device)
	}
	peer := f.live.lookup(to.Node, to.Device)
	far := f.Effects(to.Node, to.Device)
	if peer == nil || far.Down || f.Dead(to.Node) {
		return nil // sent; nobody answers
	}
	survive := (1 - near.Loss) * (1 - far.Loss)
	there := (1 - near.Egress.Loss) * (1 - far.Ingress.Loss) // the probe; its answer crosses the other two
	back := (1 - far.Egress.Loss) * (1 - near.Ingress.Loss)
	links, cut := f.probeRoute(p.addr, to)
	if cut || p.rng.Float64() >= survive*survive*there*back*links {
		return nil
	}
	e := merge(near, far)
	rtt := 2 * f.spec.oneWayNs(probeBytes) * e.latFactor() * (1 + 0.05*p.rng.Float64())
	if p.rng.Float64() < 0.01 {
		rtt *= e.tailFactor()
	}
	p.answers.Push(fabric.Answer{Seq: seq, From: peer.addr, RTT: time.Duration(rtt)})
	return nil
}

func (p *ProbePort) Poll(ctx context.Context, buf []fabric.Answer) (int, error) {
	return p.answers.Poll(ctx, buf)
}

// Close unregisters the port; answers still queued are dropped with it.
func (p *ProbePort) Close() error {
	p.once.Do(func() {
		sw := &p.fab.live
		sw.mu.Lock()
		defer sw.mu.Unlock()
		delete(sw.ports, [2]string{p.addr.Node, p.addr.Device})
	})
	return nil
}
