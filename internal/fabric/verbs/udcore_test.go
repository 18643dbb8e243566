package verbs

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/liveplan"
)

// wire is an in-memory UD fabric: ports are found by the handle's address
// and the QPN, as a device would route them; messages wait in flight
// until the test delivers (or drops, or reorders) them.
type wire struct {
	clock  int64 // ns, the ports' monotonic clock
	ports  []*udCore[int]
	ahs    map[int]ahKey
	flight []packet
}

type packet struct {
	from *udCore[int]
	to   *udCore[int]
	msg  []byte
}

type wireLink struct {
	w    *wire
	self **udCore[int]
}

func (l wireLink) createAH(k ahKey) (int, error) {
	to := k
	to.Flow = 0 // the label picks a path, not a port
	for _, p := range l.w.ports {
		if p.keyFor(p.selfGID, p.self.LID) == to {
			h := len(l.w.ahs) + 1
			l.w.ahs[h] = k
			return h, nil
		}
	}
	return 0, fmt.Errorf("no port at %+v", k)
}

func (l wireLink) destroyAH(h int) { delete(l.w.ahs, h) }

func (l wireLink) post(ah int, qpn, qkey uint32, msg []byte, stampOff int) error {
	k, ok := l.w.ahs[ah]
	if !ok {
		return fmt.Errorf("bad handle %d", ah)
	}
	b := append([]byte(nil), msg...)
	if stampOff >= 0 {
		binary.BigEndian.PutUint64(b[stampOff:], uint64(l.w.clock))
	}
	k.Flow = 0
	for _, p := range l.w.ports {
		if p.keyFor(p.selfGID, p.self.LID) == k && p.self.QPN == qpn && p.self.QKey == qkey {
			l.w.flight = append(l.w.flight, packet{from: *l.self, to: p, msg: b})
			return nil
		}
	}
	return nil // a UD send to nobody vanishes
}

func (w *wire) port(node string, ip byte, qpn uint32, token uint64) *udCore[int] {
	var c *udCore[int]
	gid := [16]byte{10: 0xff, 11: 0xff, 12: 10, 13: 78, 15: ip}
	self := fabric.ProbeAddr{Node: node, Device: "rxe0", GID: gidEntry{Raw: gid}.String(), QPN: qpn, QKey: udQKey}
	c = newUDCore[int](wireLink{w: w, self: &c}, self, gid, true, token, func() time.Time { return time.Unix(0, w.clock) })
	w.ports = append(w.ports, c)
	return c
}

// deliver hands the i-th message in flight to its port, after d.
func (w *wire) deliver(i int, d time.Duration) {
	p := w.flight[i]
	w.flight = append(w.flight[:i], w.flight[i+1:]...)
	w.clock += int64(d)
	p.to.received(w.clock, p.from.self.QPN, p.msg)
}

func TestUDCoreProbeAnswerAccounting(t *testing.T) {
	w := &wire{clock: 1e9, ahs: map[int]ahKey{}}
	a := w.port("vm1", 11, 0x100, 1)
	b := w.port("vm2", 12, 0x200, 2)
	tr := liveplan.NewTracker("vm2", 0, 2*time.Second)
	now := func() time.Time { return time.Unix(0, w.clock) }
	for range 10 {
		seq := tr.Send(now())
		if err := a.send(b.self, seq, now()); err != nil {
			t.Fatal(err)
		}
	}
	// Probe 3 is lost on the way; the others reach vm2, which answers.
	for i := len(w.flight) - 1; i >= 0; i-- {
		m, _ := decodeUDMsg(w.flight[i].msg)
		if m.Seq == 3 {
			w.flight = append(w.flight[:i], w.flight[i+1:]...)
		}
	}
	for range 9 { // the probes; vm2's answers queue up behind them
		w.deliver(0, 100*time.Microsecond)
	}
	if s := b.snapshot(); s.Answered != 9 {
		t.Fatalf("vm2 answered %d probes, want 9: %+v", s.Answered, b.snapshot())
	}
	// vm1 gets the answers: the one to probe 5 is lost, 8 comes before 7.
	answers := w.flight
	w.flight = nil
	order := []uint64{0, 1, 2, 4, 6, 8, 7, 9}
	for _, seq := range order {
		for _, p := range answers {
			if m, _ := decodeUDMsg(p.msg); m.Seq == seq {
				w.flight = append(w.flight, p)
			}
		}
	}
	for len(w.flight) > 0 {
		w.deliver(0, 100*time.Microsecond)
	}
	buf := make([]fabric.Answer, 16)
	n, err := a.poll(context.Background(), buf)
	if err != nil || n != len(order) {
		t.Fatalf("poll: %d answers, %v; want %d", n, err, len(order))
	}
	for _, ans := range buf[:n] {
		if ans.From.Node != "vm2" || ans.RTT <= 0 {
			t.Fatalf("answer %+v: want from vm2 with a round trip", ans)
		}
		tr.Answer(ans.Seq, ans.RTT)
	}
	w.clock += int64(3 * time.Second)
	tr.Expire(now())
	s := tr.Flush(0)
	if s.Sent != 10 || s.Answered != 8 || s.Lost != 2 || s.OutOfOrder != 1 {
		t.Fatalf("summary %+v; want 10 sent, 8 answered, 2 lost, 1 out of order", s)
	}
	// Round trips are the wire's delays: answer k left vm1 at send time
	// and came back after every delivery before it.
	if s.P50Ns < float64(100*time.Microsecond) || s.MaxNs > float64(2*time.Second) {
		t.Fatalf("round trips p50 %v max %v", s.P50Ns, s.MaxNs)
	}
	if got := a.snapshot(); got.Answers != 8 || got.Foreign+got.Unknown+got.Malformed != 0 {
		t.Fatalf("vm1 counted %+v", got)
	}
}

func TestUDCoreRefusesStrayAnswers(t *testing.T) {
	w := &wire{clock: 1e9, ahs: map[int]ahKey{}}
	a := w.port("vm1", 11, 0x100, 1)
	b := w.port("vm2", 12, 0x200, 2)
	// An answer carrying another port's token (vm1's previous QP on the
	// same QPN), one from a port vm1 never probed, and garbage.
	r := udMsg{Kind: udKindReply, Seq: 1, Stamp: w.clock, Token: 99, QPN: b.self.QPN, QKey: udQKey, GID: b.selfGID}.encode()
	a.received(w.clock+1000, b.self.QPN, r[:])
	r = udMsg{Kind: udKindReply, Seq: 1, Stamp: w.clock, Token: a.token, QPN: b.self.QPN, QKey: udQKey, GID: b.selfGID}.encode()
	a.received(w.clock+1000, b.self.QPN, r[:])
	a.received(w.clock+1000, b.self.QPN, []byte("hello"))
	s := a.snapshot()
	if s.Foreign != 1 || s.Unknown != 1 || s.Malformed != 1 || s.Answers != 0 {
		t.Fatalf("counted %+v", s)
	}
	if n, err := a.poll(doneCtx(), make([]fabric.Answer, 4)); n != 0 || err == nil {
		t.Fatalf("stray answers reached Poll: %d, %v", n, err)
	}
}

func TestUDCoreTargetKeys(t *testing.T) {
	w := &wire{ahs: map[int]ahKey{}}
	roce := w.port("vm1", 11, 1, 1)
	if _, err := roce.targetKey(fabric.ProbeAddr{Node: "x", QPN: 5}); err == nil {
		t.Fatal("a RoCE target without a GID was accepted")
	}
	if _, err := roce.targetKey(fabric.ProbeAddr{Node: "x", GID: "not-a-gid"}); err == nil {
		t.Fatal("a bad GID was accepted")
	}
	ib := &udCore[int]{selfGID: [16]byte{0: 0xfe, 1: 0x80, 15: 1}}
	same := [16]byte{0: 0xfe, 1: 0x80, 15: 2}
	other := [16]byte{0: 0xfe, 1: 0x81, 15: 2}
	if k := ib.keyFor(same, 7); k != (ahKey{LID: 7}) {
		t.Errorf("IB, same subnet: %+v, want the LID alone", k)
	}
	if k := ib.keyFor(other, 7); !k.Global {
		t.Errorf("IB, another subnet: %+v, want a GRH", k)
	}
	if k := ib.keyFor(same, 0); !k.Global {
		t.Errorf("IB without a LID: %+v, want a GRH", k)
	}
}

func doneCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// A live link flow's probe leaves with its flow label, and the answer
// comes back with the same one, read from the probe's sequence number
// (RoCE v2 over IPv4 carries no label on the wire).
func TestUDCoreFlowLabelBothWays(t *testing.T) {
	w := &wire{clock: 1e9, ahs: map[int]ahKey{}}
	a := w.port("vm1", 11, 0x100, 1)
	b := w.port("vm2", 12, 0x200, 2)
	tr := liveplan.NewFlowTracker("vm2", 0, 0x5a5a5, 2*time.Second)
	to := b.self
	to.FlowLabel = 0x5a5a5
	if err := a.send(to, tr.Send(time.Unix(0, w.clock)), time.Unix(0, w.clock)); err != nil {
		t.Fatal(err)
	}
	w.deliver(0, 100*time.Microsecond) // the probe; vm2 answers
	w.deliver(0, 100*time.Microsecond)
	var flows []uint32
	for _, k := range w.ahs {
		flows = append(flows, k.Flow)
	}
	if len(flows) != 2 || flows[0] != 0x5a5a5 || flows[1] != 0x5a5a5 {
		t.Fatalf("handles carry flow labels %x, want the probe's both ways", flows)
	}
	buf := make([]fabric.Answer, 4)
	if n, err := a.poll(context.Background(), buf); err != nil || n != 1 || fabric.SeqFlowLabel(buf[0].Seq) != 0x5a5a5 {
		t.Fatalf("answer %+v (%d, %v): want one, to the labelled probe", buf[:n], n, err)
	}
}
