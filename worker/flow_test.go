package worker

import (
	"context"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// lateFlows is a fabric whose sessions know their UDP source port only
// once connected, as mlx5's do: base | the device's rail digit.
type lateFlows struct {
	fabric.Fabric
	base uint16
}

type lateFlowSession struct {
	fabric.Session
	sport     uint16
	connected bool
}

func (f lateFlows) Open(ctx context.Context, ep probe.Endpoint, p probe.TestParams) (fabric.Session, error) {
	s, err := f.Fabric.Open(ctx, ep, p)
	if err != nil {
		return nil, err
	}
	return &lateFlowSession{Session: s, sport: f.base | uint16(ep.Device[len(ep.Device)-1]-'0')}, nil
}

func (s *lateFlowSession) Connect(ctx context.Context, remote probe.QPInfo) error {
	s.connected = true
	return s.Session.Connect(ctx, remote)
}

func (s *lateFlowSession) Info() probe.QPInfo {
	q := s.Session.Info()
	q.UDPSport = 0
	if s.connected {
		q.UDPSport = s.sport
	}
	return q
}

func flowAgents(t *testing.T, o Options) (*Agent, *Agent) {
	t.Helper()
	a, b, _ := agentPairOn(t, o, func(name string, f fabric.Fabric) fabric.Fabric {
		return lateFlows{Fabric: f, base: map[string]uint16{"a": 0xa000, "b": 0xb000}[name]}
	})
	return a, b
}

// Each rail's result carries the flow its initiator's session had after
// the test, in both directions of a pair task and through the answer's
// encoding.
func TestTaskResultsCarryTheInitiatorsFlow(t *testing.T) {
	const token = "s3cret"
	a, b := flowAgents(t, Options{Token: token})
	for _, rr := range a.RunTask(context.Background(), pairTask(a, b, 4, token)).Rails {
		if want := 0xa000 | uint16(rr.Rail); rr.Class != probe.ClassOK || rr.Flow != want {
			t.Errorf("a→b rail %d: %s (%v), flow %#x, want ok and %#x", rr.Rail, rr.Class, rr.Error, rr.Flow, want)
		}
	}
	res := postTask(t, a, token, pairTask(a, b, 4, token))
	for dir, rails := range map[uint16][]wire.RailResult{0xa000: res.Rails, 0xb000: res.Reverse.Rails} {
		if len(rails) != 4 {
			t.Fatalf("%d rails from %#x's side, want 4", len(rails), dir)
		}
		for _, rr := range rails {
			if rr.Flow != dir|uint16(rr.Rail) {
				t.Errorf("rail %d: flow %#x, want %#x (the initiator's, read after it connected)", rr.Rail, rr.Flow, dir|uint16(rr.Rail))
			}
		}
	}
}

// Each rail's result carries the responder's flow as its session open
// answered it, read there once the responder connected (the same late
// ports), in both directions of a pair task and through the answer's
// encoding.
func TestTaskResultsCarryTheRespondersFlow(t *testing.T) {
	const token = "s3cret"
	a, b := flowAgents(t, Options{Token: token})
	for _, rr := range a.RunTask(context.Background(), pairTask(a, b, 4, token)).Rails {
		if want := 0xb000 | uint16(rr.Rail); rr.Class != probe.ClassOK || rr.BackFlow != want {
			t.Errorf("a→b rail %d: %s (%v), back flow %#x, want ok and %#x", rr.Rail, rr.Class, rr.Error, rr.BackFlow, want)
		}
	}
	res := postTask(t, a, token, pairTask(a, b, 4, token))
	for back, rails := range map[uint16][]wire.RailResult{0xb000: res.Rails, 0xa000: res.Reverse.Rails} {
		if len(rails) != 4 {
			t.Fatalf("%d rails answered by %#x's side, want 4", len(rails), back)
		}
		for _, rr := range rails {
			if rr.BackFlow != back|uint16(rr.Rail) {
				t.Errorf("rail %d: back flow %#x, want %#x (the responder's, read after it connected)", rr.Rail, rr.BackFlow, back|uint16(rr.Rail))
			}
		}
	}
}
