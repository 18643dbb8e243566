package live

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// countingProber hands out ports at new QP numbers and remembers which
// were closed; a device in refuse cannot be opened.
type countingProber struct {
	mu     sync.Mutex
	qpn    uint32
	closed map[uint32]bool
	refuse map[string]bool
}

type countedPort struct {
	p    *countingProber
	addr fabric.ProbeAddr
}

func (p *countingProber) OpenProbe(_ context.Context, device string, _ int) (fabric.ProbePort, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refuse[device] {
		return nil, errors.New("no such device")
	}
	p.qpn++
	return &countedPort{p: p, addr: fabric.ProbeAddr{Node: "n1", Device: device, QPN: p.qpn}}, nil
}

func (c *countedPort) Addr() fabric.ProbeAddr                             { return c.addr }
func (c *countedPort) Send(fabric.ProbeAddr, uint64) error                { return nil }
func (c *countedPort) Poll(context.Context, []fabric.Answer) (int, error) { return 0, nil }
func (c *countedPort) Close() error {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	c.p.closed[c.addr.QPN] = true
	return nil
}

// A device that was removed and came back gets a new probe port at a new
// address; the other rails keep theirs, and a port that is not usable, or
// cannot be opened yet, keeps the old one until the next call.
func TestReopenReplacesAStaleRailsPort(t *testing.T) {
	p := &countingProber{closed: map[uint32]bool{}, refuse: map[string]bool{}}
	r := New("n1", p, Options{}, nil)
	ports := []probe.Port{{Device: "mlx5_0", Rail: 0, Usable: true}, {Device: "mlx5_1", Rail: 1, Usable: true},
		{Device: "mlx5_2", Rail: 2, Usable: true}}
	first, err := r.Open(context.Background(), ports)
	if err != nil || len(first) != 3 {
		t.Fatalf("open: %v %v", first, err)
	}
	ports[2].Usable = false
	p.refuse["mlx5_1"] = true
	got := r.Reopen(context.Background(), ports, map[int]bool{0: true, 1: true, 2: true})
	if len(got) != 1 || got[0].QPN == first[0].QPN {
		t.Fatalf("reopened %+v, want only rail 0 at a new QP number", got)
	}
	if !p.closed[first[0].QPN] || p.closed[first[1].QPN] || p.closed[first[2].QPN] {
		t.Fatalf("closed %v: want only rail 0's old port", p.closed)
	}
	if r.rails[0].port.Addr().QPN != got[0].QPN {
		t.Fatal("rail 0 does not probe from its new port")
	}
	delete(p.refuse, "mlx5_1")
	if got := r.Reopen(context.Background(), ports, map[int]bool{1: true}); len(got) != 1 || got[1].QPN == first[1].QPN {
		t.Fatalf("retry of rail 1: %+v", got)
	}
}
