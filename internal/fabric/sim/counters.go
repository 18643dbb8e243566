package sim

import (
	"fmt"
	"math"
	"sync"

	"github.com/rdmamesh/rdmamesh/internal/counters"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// The simulated ports count what their traffic met, as an mlx5 port's
// hw_counters do, so the worker reads evidence from the sim exactly as
// from sysfs. A test's writes cross the initiator's egress and the
// target's ingress; its acknowledgements the other two. Each lost write is
// an out-of-sequence packet at the receiver and a sequence NAK at the
// sender (one in eight of them, the last of a burst, a timeout instead);
// a lost acknowledgement that no later one covers (ackShare) times the
// sender out and reaches the receiver again as a duplicate request. Loss
// here is the fault's one-way loss ratio applied per packet, in expected
// values, so the counts are deterministic.
var simCounters = []counters.Def{
	{Name: "out_of_sequence", Dir: "hw_counters", Kind: counters.Loss, Side: counters.Ingress},
	{Name: "packet_seq_err", Dir: "hw_counters", Kind: counters.Loss, Side: counters.Egress},
	{Name: "local_ack_timeout_err", Dir: "hw_counters", Kind: counters.Timeout, Side: counters.Egress},
	{Name: "duplicate_request", Dir: "hw_counters", Kind: counters.Loss, Side: counters.Either},
	{Name: "link_downed", Dir: "counters", Kind: counters.LinkDown, Side: counters.Either},
}

const (
	cOutOfSeq = iota
	cSeqErr
	cAckTimeout
	cDuplicate
	cLinkDowned
)

// portCounts are the cumulative counts of every port, as floats so that
// fractions of a packet accumulate across tests.
type portCounts struct {
	mu sync.Mutex
	m  map[[2]string]*[5]float64
}

func (pc *portCounts) add(node, device string, c int, n float64) {
	if n <= 0 {
		return
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.m == nil {
		pc.m = map[[2]string]*[5]float64{}
	}
	v := pc.m[[2]string{node, device}]
	if v == nil {
		v = new([5]float64)
		pc.m[[2]string{node, device}] = v
	}
	v[c] += n
}

// Counters is the port's counter snapshot (counters.Read's form).
func (n *Node) Counters(device string, port int) (counters.Snapshot, error) {
	if n.fab.spec.deviceIndex(device) < 0 {
		return counters.Snapshot{}, fmt.Errorf("no HCA %s on %s", device, n.name)
	}
	s := counters.Snapshot{Device: device, Port: port, Values: make([]counters.Value, len(simCounters))}
	pc := &n.fab.counts
	pc.mu.Lock()
	v := pc.m[[2]string{n.name, device}]
	for i, d := range simCounters {
		s.Values[i].Def = d
		if v != nil {
			s.Values[i].N = uint64(math.Floor(v[i]))
		}
	}
	pc.mu.Unlock()
	return s, nil
}

// oneWayLoss is the packet loss ratio of traffic from the HCA with
// effects from to the one with effects to, over links losing route.
func oneWayLoss(from, to Effects, route float64) float64 {
	return 1 - (1-from.Loss)*(1-from.Egress.Loss)*(1-to.Loss)*(1-to.Ingress.Loss)*(1-route)
}

// count records a transfer of packets writes from (fromNode, fromDev) to
// (toNode, toDev) and their acknowledgements; route is the links' loss
// on the writes' way and on the acknowledgements'.
func (f *Fabric) count(fromNode, fromDev, toNode, toDev string, packets float64, route [2]float64) {
	from, to := f.Effects(fromNode, fromDev), f.Effects(toNode, toDev)
	if lost := packets * oneWayLoss(from, to, route[0]); lost > 0 {
		f.counts.add(toNode, toDev, cOutOfSeq, lost)
		f.counts.add(fromNode, fromDev, cSeqErr, lost*7/8)
		f.counts.add(fromNode, fromDev, cAckTimeout, lost/8)
	}
	if lost := packets * ackShare * oneWayLoss(to, from, route[1]); lost > 0 {
		f.counts.add(fromNode, fromDev, cAckTimeout, lost)
		f.counts.add(toNode, toDev, cDuplicate, lost)
	}
}

// countTest records one test's traffic: the latency ping-pong writes both
// ways, the bandwidth test streams one way in MTU-sized packets.
func (s *Session) countTest(p probe.TestParams, bandwidth bool) {
	if s.remote.Node == "" {
		return
	}
	f, me, dev := s.node.fab, s.node.name, s.ep.Device
	if !bandwidth {
		n := float64(p.LatencyIters + p.Warmup)
		f.count(me, dev, s.remote.Node, s.remote.Device, n, s.linkLoss)
		f.count(s.remote.Node, s.remote.Device, me, dev, n, [2]float64{s.linkLoss[1], s.linkLoss[0]})
		return
	}
	mtu := max(s.pathMTU, 256)
	f.count(me, dev, s.remote.Node, s.remote.Device, float64(p.BWIters)*math.Ceil(float64(p.BWSize)/float64(mtu)), s.linkLoss)
}
