package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// retryExhaust is how long an RC QP takes to give up on an unacknowledged
// WRITE with perftest's defaults: local ACK timeout 14 (4.096 µs x 2^14 ≈
// 67 ms) times retry_cnt 7 plus the first try.
const retryExhaust = 8 * 67108864 * time.Nanosecond

// Session is one simulated RC QP. Like a verbs session it is owned by one
// goroutine; Close may be called any number of times.
type Session struct {
	node *Node
	ep   probe.Endpoint
	hca  int
	info probe.QPInfo

	connected bool
	closed    bool
	remote    probe.QPInfo
	path      Effects // both ends' faults merged
	pathMTU   int
	// doom is a failure already decided at Connect (peer port down, RoCE
	// version mismatch, ...) that real RC only reveals at the first transfer.
	doom *probe.Error
	// broken is the failure that ended this QP: later transfers on a QP in
	// the error state fail at once, so they return it without waiting.
	broken *probe.Error
	rng    *rand.Rand
	// latNoise and bwNoise scale this test's figures by the preset's
	// TestSpread (1 on a quiet preset).
	latNoise, bwNoise float64
	// linkLoss is the loss of the cables and switches on the writes' path
	// and on the acknowledgements' (routeEffects), for the counters.
	linkLoss [2]float64
	// flaps are the flapping faults on either path (routeEffects).
	flaps []flapMet
}

// Info is the local QP info to hand to the peer.
func (s *Session) Info() probe.QPInfo { return s.info }

// Connect checks what RTR checks. Failures RTR cannot see are kept for the
// first transfer, as on real hardware.
func (s *Session) Connect(ctx context.Context, remote probe.QPInfo) error {
	const verb = "ibv_modify_qp(RTR)"
	switch {
	case s.closed:
		return misuse(verb, "Connect on a closed session")
	case s.connected:
		return misuse(verb, "Connect on a session already in RTS; open a new session per test")
	case remote.Node == "" || remote.Device == "" || remote.MTU <= 0:
		return misuse(verb, fmt.Sprintf("remote QP info is incomplete (node %q, device %q, mtu %d)", remote.Node, remote.Device, remote.MTU))
	}
	if err := ctx.Err(); err != nil {
		return cancelled(verb, err)
	}
	fab, spec := s.node.fab, s.node.fab.spec
	near := fab.Effects(s.node.name, s.ep.Device)
	far := fab.Effects(remote.Node, remote.Device)
	// Both ends' RTR see the same pair of GIDs, so whichever side is wrong,
	// the pair cannot connect; the peer's own Connect fails the same way.
	switch {
	case near.WrongGID || spec.roce() && s.info.GIDType == "":
		return invalidGID(spec, s.node.name, s.ep.Device, s.info.GIDIndex)
	case far.WrongGID || spec.roce() && remote.GIDType == "":
		return invalidGID(spec, remote.Node, remote.Device, remote.GIDIndex)
	}
	s.remote = remote
	s.path = merge(merge(near, far), directed(near, far))
	s.pathMTU = min(s.info.MTU, remote.MTU)
	s.connected = true

	// s.where() only in the failure branches: formatting it for every
	// healthy test was a measurable share of a large sweep.
	switch {
	case remote.LinkLayer != s.info.LinkLayer:
		s.doom = retryExceeded(
			fmt.Sprintf("RDMA WRITEs %s were never acknowledged: the ends use different link layers (%s vs %s)",
				s.where(), s.info.LinkLayer, remote.LinkLayer),
			"test rail i against rail i of the same fabric; an InfiniBand port cannot reach an Ethernet one")
	case far.Down:
		s.doom = retryExceeded(
			fmt.Sprintf("RDMA WRITEs %s were never acknowledged (transport retry counter exceeded): %s port 1 on %s is DOWN",
				s.where(), remote.Device, remote.Node),
			portDown(spec, remote.Node, remote.Device).Fix)
	case spec.roce() && remote.GIDType != s.info.GIDType:
		s.doom = retryExceeded(
			fmt.Sprintf("RDMA WRITEs %s were never acknowledged: the ends use different RoCE versions (%s vs %s)",
				s.where(), s.info.GIDType, remote.GIDType),
			fmt.Sprintf("use a RoCE v2 GID on both ends (index %d here, or -1 to let the workers choose)", spec.GIDIndex))
	}
	return nil
}

// route adds what the cables and switches between the ends do, and the
// failures they and a missing subnet manager cause, after Connect's own.
// It runs at the first transfer: only initiators transfer, so responders
// never route, which halves a large sweep's routing.
func (s *Session) route() {
	spec := s.node.fab.spec
	route := s.routeEffects(spec.deviceIndex(s.remote.Device))
	routeDown := route.Down
	route.Down = false
	s.path = merge(s.path, route)
	switch {
	case s.doom != nil:
	case routeDown:
		s.doom = s.linkDown()
	case !spec.roce() && s.remote.LID == 0:
		s.doom = retryExceeded(
			fmt.Sprintf("RDMA WRITEs %s were never acknowledged: the peer has LID 0, so no subnet manager routes to it", s.where()),
			"run a subnet manager (opensm, or the switch's); `sminfo` and `ibstat` (SM lid) show whether one is active")
	}
}

// linkDown is how a test over a down cable or switch fails. The engine
// cannot see the fabric: a dead link on the path looks like a peer that
// never answers.
func (s *Session) linkDown() *probe.Error {
	return retryExceeded(
		fmt.Sprintf("RDMA WRITEs %s were never acknowledged (transport retry counter exceeded): no packet got through", s.where()),
		linkFix(s.node.fab.spec))
}

func (s *Session) where() string {
	return fmt.Sprintf("from %s %s to %s %s", s.node.name, s.ep.Device, s.remote.Node, s.remote.Device)
}

// Latency runs the initiator side of the write ping-pong; one-way = RTT/2.
func (s *Session) Latency(ctx context.Context, p probe.TestParams) (probe.Latency, error) {
	if err := s.begin(ctx, p); err != nil {
		return probe.Latency{}, err
	}
	spec := s.node.fab.spec
	if e := s.dropCheck(ctx, p, p.LatencySize); e != nil {
		return probe.Latency{}, e
	}
	s.countTest(p, false)
	oneWay := spec.oneWayNs(p.LatencySize) * s.path.latFactor() * s.latNoise
	samples, err := latencySamples(ctx, s.rng, p.LatencyIters, oneWay, spec.JitterFrac, s.path)
	if err != nil {
		s.broken = cancelled("ibv_poll_cq", err)
		return probe.Latency{}, s.broken
	}
	var sum float64
	for _, v := range samples {
		sum += v
	}
	lat := probe.Summarize(samples)
	need := seconds(2 * (sum + float64(p.Warmup)*oneWay) / 1e9) // every iteration is a round trip
	if e := s.settle(ctx, p, need, "the latency test", nil); e != nil {
		return probe.Latency{}, e
	}
	return lat, nil
}

// Bandwidth streams BWIters WRITEs of BWSize bytes with TxDepth in flight.
func (s *Session) Bandwidth(ctx context.Context, p probe.TestParams) (probe.Bandwidth, error) {
	if p.BWSize == 0 && !s.closed {
		return probe.Bandwidth{}, nil // bandwidth skipped
	}
	if err := s.begin(ctx, p); err != nil {
		return probe.Bandwidth{}, err
	}
	if e := s.dropCheck(ctx, p, p.BWSize); e != nil {
		return probe.Bandwidth{}, e
	}
	s.countTest(p, true)
	spec := s.node.fab.spec
	oneWay := spec.oneWayNs(8) * s.path.latFactor()
	gbps := spec.bwGbps(p.BWSize, p.TxDepth, oneWay) * s.path.bwFactor()
	// Go-back-N: every lost packet resends the window behind it, so even a
	// test that survives loss streams well below line rate.
	gbps /= 1 + 8*s.path.Loss
	gbps *= (1 + 0.003*s.rng.NormFloat64()) * s.bwNoise
	bytes := int64(p.BWSize) * int64(p.BWIters)
	secs := float64(bytes) * 8 / (gbps * 1e9)
	if e := s.settle(ctx, p, seconds(secs), "the bandwidth test", nil); e != nil {
		return probe.Bandwidth{}, e
	}
	return probe.Bandwidth{
		Gbps:     gbps,
		MsgRate:  gbps * 1e9 / (8 * float64(p.BWSize)),
		Bytes:    bytes,
		Duration: secs,
	}, nil
}

// Respond is the responder half. The initiator models the whole exchange, so
// there is nothing to do unless this end's own port is down.
func (s *Session) Respond(ctx context.Context, p probe.TestParams) error {
	if s.closed {
		return misuse("ibv_poll_cq", "Respond on a closed session")
	}
	if s.node.fab.Effects(s.node.name, s.ep.Device).Down {
		return portDown(s.node.fab.spec, s.node.name, s.ep.Device)
	}
	return nil
}

// Close is idempotent.
func (s *Session) Close() error {
	s.closed = true
	return nil
}

// begin is the common prologue of a transfer. The first transfer routes the
// test, seeds the session's random stream and decides whether a flapping
// link or a lossy path kills it; only initiators transfer, so responders
// never move the attempt counters.
func (s *Session) begin(ctx context.Context, p probe.TestParams) error {
	const verb = "ibv_post_send"
	switch {
	case s.closed:
		return misuse(verb, "transfer on a closed session")
	case !s.connected:
		return misuse(verb, "transfer before Connect: the QP is not in RTS")
	case s.broken != nil:
		return s.broken
	}
	if err := ctx.Err(); err != nil {
		return cancelled(verb, err)
	}
	if err := p.Validate(); err != nil {
		return &probe.Error{Class: probe.ClassInternal, Verb: verb, Errno: 22,
			Cause: "bad test parameters: " + err.Error(),
			Fix:   "fix the sweep parameters; the coordinator should have rejected them"}
	}
	if s.rng == nil {
		s.route()
		n := s.node
		attempt := n.nextAttempt(s.remote.Node, s.ep.Rail)
		h := hash64(n.fab.seed, "test", n.name, s.remote.Node, s.ep.Device, s.remote.Device, s.ep.Rail, attempt)
		s.rng = rand.New(rand.NewPCG(h, splitmix(h)))
		s.latNoise, s.bwNoise = 1, 1
		if sp := n.fab.spec.TestSpread; sp > 0 {
			s.latNoise, s.bwNoise = testNoise(s.rng, sp), testNoise(s.rng, sp)
		}
		if len(s.flaps) > 0 {
			s.drawFlaps()
		}
		if s.rng.Float64() < s.path.Loss && s.doom == nil {
			s.doom = retryExceeded(
				fmt.Sprintf("RDMA WRITEs %s were not acknowledged after 7 retries (transport retry counter exceeded): "+
					"packets are being lost on the path (%s)", s.where(), s.lossy()),
				linkFix(n.fab.spec))
		}
	}
	if s.doom != nil {
		if e := s.settle(ctx, p, retryExhaust, "", s.doom); e != nil {
			return e
		}
	}
	return nil
}

// lossy names the faulted ends and links, which a real engine would only
// learn from the counters linkFix points at.
func (s *Session) lossy() string {
	var ends []string
	fab := s.node.fab
	for _, end := range [][2]string{{s.node.name, s.ep.Device}, {s.remote.Node, s.remote.Device}} {
		e := fab.Effects(end[0], end[1])
		for _, l := range []struct {
			what string
			p    float64
		}{{"", e.Loss}, {"egress ", e.Egress.Loss}, {"ingress ", e.Ingress.Loss}} {
			if l.p > 0 {
				ends = append(ends, fmt.Sprintf("%.3g%% %sloss at %s %s", l.p*100, l.what, end[0], end[1]))
			}
		}
	}
	if l := s.linkLoss; l[0] > 0 || l[1] > 0 {
		ends = append(ends, fmt.Sprintf("%.3g%% loss on the links the writes cross, %.3g%% on the acknowledgements'", l[0]*100, l[1]*100))
	}
	return strings.Join(ends, ", ")
}

// dropCheck fails a transfer whose packets are larger than a hop carries.
func (s *Session) dropCheck(ctx context.Context, p probe.TestParams, size int) *probe.Error {
	packet := min(size, s.pathMTU)
	if s.path.DropAbove == 0 || packet <= s.path.DropAbove {
		return nil
	}
	e := mtuMismatch(s.node.fab.spec, size, packet, s.pathMTU, s.path.DropAbove, s.where())
	return s.settle(ctx, p, retryExhaust, "", e)
}

// settle spends the modelled duration d of an outcome (fail nil = success)
// and returns the failure, if any, that ends the test. An outcome later than
// p.Timeout becomes a timeout, as the real engine stops polling first; the
// class thus depends on the model, never on TimeScale.
func (s *Session) settle(ctx context.Context, p probe.TestParams, d time.Duration, what string, fail *probe.Error) *probe.Error {
	if d > p.Timeout {
		fail = overTimeout(what, d, p.Timeout, fail)
		d = p.Timeout
	}
	if err := s.node.fab.wait(ctx, d, p.Timeout); err != nil {
		fail = cancelled("ibv_poll_cq", err)
	}
	if fail != nil {
		s.broken = fail
	}
	return fail
}
