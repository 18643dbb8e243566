package verbs

import (
	"context"
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// udLink is what a probe port needs from the device: address handles and
// posting one message. The cgo QP implements it (ud_cgo.go); the tests use
// a wire in memory, so everything above the verbs is tested without an HCA.
type udLink[H comparable] interface {
	createAH(k ahKey) (H, error)
	destroyAH(h H)
	// post sends msg to (ah, qpn, qkey); with stampOff >= 0 the send time
	// (monotonic ns, big-endian) is written there right before the post.
	post(ah H, qpn, qkey uint32, msg []byte, stampOff int) error
}

// udQKey is the probe QPs' Q_Key: any value without the high
// ("controlled") bit; all rdmamesh probe ports use the same one.
const udQKey = 0x11111111

// udAnswerQueue bounds the answers waiting for Poll (fabric.AnswerQueue).
const udAnswerQueue = 4096

// ProbeStats counts what a probe port saw (ProbePort.Stats).
type ProbeStats struct {
	Answers   uint64 // answers to our probes handed to Poll
	Answered  uint64 // peers' probes we answered
	Dropped   uint64 // answers lost because Poll fell behind
	Foreign   uint64 // answers with another port's token (an earlier port on the QPN)
	Unknown   uint64 // answers from an address we never probed
	Malformed uint64 // messages that are not probes of this version
	ReplyErr  uint64 // peers' probes we could not answer (no AH, send failed)
	WCErr     uint64 // work completions with an error status
	Resets    uint64 // QP resets after it left RTS
	LastError string // the newest channel or completion failure
	LastAt    time.Time
}

// udCore is a probe port above the verbs: it encodes probes, answers the
// peers' ones and turns answers to ours into fabric.Answers.
type udCore[H comparable] struct {
	link    udLink[H]
	self    fabric.ProbeAddr
	selfGID [16]byte
	roce    bool // Ethernet link layer: every handle needs a GRH
	token   uint64
	ahs     *ahCache[H]
	answers *fabric.AnswerQueue

	mu    sync.Mutex
	peers map[peerKey]peer // whom we probed, by the address their answers carry
	stats ProbeStats
}

type peerKey struct {
	ah  ahKey
	qpn uint32
}

type peer struct {
	addr fabric.ProbeAddr
	sent time.Time
}

func newUDCore[H comparable](link udLink[H], self fabric.ProbeAddr, selfGID [16]byte, roce bool, token uint64,
	now func() time.Time) *udCore[H] {
	return &udCore[H]{link: link, self: self, selfGID: selfGID, roce: roce, token: token,
		ahs: newAHCache(link.createAH, link.destroyAH, now), answers: fabric.NewAnswerQueue(udAnswerQueue),
		peers: map[peerKey]peer{}}
}

// keyFor is the handle a message to (gid, lid) needs: a GRH on RoCE, the
// LID inside an InfiniBand subnet, a GRH across subnets or without a LID
// (as Session.Connect decides for RC).
func (c *udCore[H]) keyFor(gid [16]byte, lid uint16) ahKey {
	if !needsGRH(c.roce, gid, gid != [16]byte{}, lid, c.selfGID) {
		return ahKey{LID: lid}
	}
	return ahKey{Global: true, GID: gid, LID: lid}
}

func (c *udCore[H]) targetKey(to fabric.ProbeAddr) (ahKey, *probe.Error) {
	var gid [16]byte
	if to.GID != "" {
		g, err := parseGIDString(to.GID)
		if err != nil {
			return ahKey{}, &probe.Error{Class: probe.ClassInvalidGID, Verb: "ibv_create_ah",
				Cause: "the live plan gives " + to.Node + " an unusable GID: " + err.Error(), Fix: "check that node's GID selection (its inventory)"}
		}
		gid = g
	}
	k := c.keyFor(gid, to.LID)
	if k.Global && gid == [16]byte{} {
		return ahKey{}, &probe.Error{Class: probe.ClassInvalidGID, Verb: "ibv_create_ah",
			Cause: "the live plan gives " + to.Node + " no GID, and a RoCE probe needs one", Fix: "check that node's GID selection (its inventory)"}
	}
	return k, nil
}

// send posts probe seq to a target, with the target's flow label on RoCE;
// the peer answers with the label seq carries (answer).
func (c *udCore[H]) send(to fabric.ProbeAddr, seq uint64, now time.Time) error {
	k, perr := c.targetKey(to)
	if perr != nil {
		return perr
	}
	hk := k // the handle carries the send's flow label; answers are matched without it
	if k.Global {
		hk.Flow = to.FlowLabel & fabric.FlowLabelMask
	}
	ah, err := c.ahs.get(hk)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.peers[peerKey{k, to.QPN}] = peer{addr: to, sent: now}
	c.mu.Unlock()
	m := udMsg{Kind: udKindProbe, Seq: seq, Token: c.token, QPN: c.self.QPN, QKey: c.self.QKey, GID: c.selfGID, LID: c.self.LID}
	b := m.encode()
	return c.link.post(ah, to.QPN, to.QKey, b[:], udStampOff)
}

// received handles one message: a peer's probe is answered at once, an
// answer to ours becomes a fabric.Answer. ts is when the poller took it
// from the CQ (the same clock as the probe's send time), srcQP the
// sender's QPN as the device saw it.
func (c *udCore[H]) received(ts int64, srcQP uint32, data []byte) {
	m, err := decodeUDMsg(data)
	if err != nil {
		c.count(func(s *ProbeStats) { s.Malformed++ })
		return
	}
	k := c.keyFor(m.GID, m.LID)
	if m.Kind == udKindProbe {
		c.answer(m, k, srcQP)
		return
	}
	if m.Token != c.token {
		c.count(func(s *ProbeStats) { s.Foreign++ })
		return
	}
	c.mu.Lock()
	p, ok := c.peers[peerKey{k, srcQP}]
	c.mu.Unlock()
	rtt := time.Duration(ts - m.Stamp)
	switch {
	case !ok:
		c.count(func(s *ProbeStats) { s.Unknown++ })
		return
	case rtt < 0:
		c.count(func(s *ProbeStats) { s.Malformed++ })
		return
	}
	if c.answers.Push(fabric.Answer{Seq: m.Seq, From: p.addr, RTT: rtt}) {
		c.count(func(s *ProbeStats) { s.Answers++ })
	} else {
		c.count(func(s *ProbeStats) { s.Dropped++ })
	}
}

// answer echoes a peer's probe (sequence, send time, token) back to the
// address it carries, with ours in it.
func (c *udCore[H]) answer(m udMsg, k ahKey, srcQP uint32) {
	if k.Global {
		k.Flow = fabric.SeqFlowLabel(m.Seq) // back over the way the plan chose
	}
	ah, err := c.ahs.get(k)
	if err == nil {
		r := m
		r.Kind, r.QPN, r.QKey, r.GID, r.LID = udKindReply, c.self.QPN, c.self.QKey, c.selfGID, c.self.LID
		b := r.encode()
		err = c.link.post(ah, srcQP, m.QKey, b[:], -1)
	}
	if err != nil {
		c.count(func(s *ProbeStats) { s.ReplyErr++ })
		return
	}
	c.count(func(s *ProbeStats) { s.Answered++ })
}

// sweep forgets targets not probed within the handles' idle time and
// destroys idle handles, so a port's memory follows its current targets.
func (c *udCore[H]) sweep(now time.Time) {
	c.mu.Lock()
	for k, p := range c.peers {
		if now.Sub(p.sent) >= c.ahs.idle {
			delete(c.peers, k)
		}
	}
	c.mu.Unlock()
	c.ahs.sweep()
}

func (c *udCore[H]) count(f func(*ProbeStats)) {
	c.mu.Lock()
	f(&c.stats)
	c.mu.Unlock()
}

func (c *udCore[H]) snapshot() ProbeStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// poll is fabric.ProbePort.Poll over the answer queue.
func (c *udCore[H]) poll(ctx context.Context, buf []fabric.Answer) (int, error) {
	return c.answers.Poll(ctx, buf)
}
