package worker_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
	"github.com/rdmamesh/rdmamesh/worker"
)

// watchedFabric reports health like the verbs engine: a port goes down,
// the fabric says so on Changes and in Ports and Health.
type watchedFabric struct {
	mu       sync.Mutex
	down     bool
	reopened int // times rxe0 came back after a removal
	changes  chan struct{}
}

func (f *watchedFabric) Name() string { return "watched" }

func (f *watchedFabric) Ports(context.Context) ([]probe.Port, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := probe.Port{Device: "rxe0", Port: 1, LinkLayer: "Ethernet", State: "ACTIVE", MTU: 1024, GIDIndex: 1, Usable: true}
	if f.down {
		p.State, p.Usable, p.UnusableWhy = "DOWN", false, "rxe0 port 1 went down (IBV_EVENT_PORT_ERR)"
	}
	return []probe.Port{p}, nil
}

func (f *watchedFabric) Open(context.Context, probe.Endpoint, probe.TestParams) (fabric.Session, error) {
	return nil, &probe.Error{Class: probe.ClassPortDown, Cause: "not in this test"}
}

func (f *watchedFabric) Health() []probe.DeviceHealth {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return []probe.DeviceHealth{{Device: "rxe0", State: probe.HealthPortDown, DownPorts: []int{1}, Cause: "rxe0 port 1 went down"}}
	}
	return []probe.DeviceHealth{{Device: "rxe0", State: probe.HealthOK, Reopened: f.reopened}}
}

// cameBack is rxe0 removed and back, as the verbs watcher reports it.
func (f *watchedFabric) cameBack() {
	f.mu.Lock()
	f.reopened++
	f.mu.Unlock()
	f.changes <- struct{}{}
}

func (f *watchedFabric) Changes() <-chan struct{} { return f.changes }

func (f *watchedFabric) set(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
	f.changes <- struct{}{}
}

// A device event republishes the inventory (new generation, port
// unusable, why) and /v1/health shows it; recovery goes the same way.
func TestHealthRepublishesInventory(t *testing.T) {
	fab := &watchedFabric{changes: make(chan struct{}, 1)}
	a, err := worker.Start(context.Background(), worker.Options{Name: "node-01", Fabric: fab,
		GossipBind: "127.0.0.1:0", APIListen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	gen := a.Inventory().Generation
	fab.set(true)
	wait.For(t, "the inventory to show the port down", func() bool {
		inv := a.Inventory()
		return inv.Generation > gen && !inv.Ports[0].Usable
	})
	var h worker.HealthReply
	getJSON(t, "http://"+a.APIAddr()+"/v1/health", &h)
	if len(h.Devices) != 1 || h.Devices[0].State != probe.HealthPortDown || h.Usable != 0 || h.Ports != 1 ||
		h.Process.Goroutines <= 0 || h.Process.FDs <= 0 || h.Process.RSSBytes <= 0 {
		t.Fatalf("health while down: %+v", h)
	}
	fab.set(false)
	wait.For(t, "the inventory to show the port back", func() bool { return a.Inventory().Ports[0].Usable })
}

// statsProber opens no port but counts like the verbs engine's prober.
type statsProber struct{}

func (statsProber) OpenProbe(context.Context, string, int) (fabric.ProbePort, error) {
	return nil, &probe.Error{Class: probe.ClassPortDown, Cause: "not in this test"}
}

func (statsProber) ProbeStats() []probe.ProbePortStats {
	return []probe.ProbePortStats{{Device: "rxe0", Port: 1, Answers: 10, Resets: 2, LastError: "ibv_poll_cq: EIO"}}
}

// /v1/health shows the probe ports' own counts when the prober keeps them.
func TestHealthShowsProbeStats(t *testing.T) {
	fab := &watchedFabric{changes: make(chan struct{}, 1)}
	a, err := worker.Start(context.Background(), worker.Options{Name: "node-01", Fabric: fab, Prober: statsProber{},
		GossipBind: "127.0.0.1:0", APIListen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	var h worker.HealthReply
	getJSON(t, "http://"+a.APIAddr()+"/v1/health", &h)
	if len(h.Probes) != 1 || h.Probes[0].Resets != 2 || h.Probes[0].LastError == "" {
		t.Fatalf("probe stats in health: %+v", h.Probes)
	}
}

// qpnProber opens probe ports at ever new QP numbers.
type qpnProber struct {
	mu  sync.Mutex
	qpn uint32
}

type qpnPort struct{ addr fabric.ProbeAddr }

func (p *qpnProber) OpenProbe(_ context.Context, device string, _ int) (fabric.ProbePort, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.qpn++
	return &qpnPort{addr: fabric.ProbeAddr{Device: device, GID: "fe80::1", QPN: p.qpn, QKey: 0x11111111}}, nil
}

func (q *qpnPort) Addr() fabric.ProbeAddr                             { return q.addr }
func (q *qpnPort) Send(fabric.ProbeAddr, uint64) error                { return nil }
func (q *qpnPort) Poll(context.Context, []fabric.Answer) (int, error) { return 0, nil }
func (q *qpnPort) Close() error                                       { return nil }

// A device that was removed and came back probes again from a new probe
// port, and the inventory (a new generation) carries its new address.
func TestProbePortReopensWhenTheDeviceComesBack(t *testing.T) {
	fab := &watchedFabric{changes: make(chan struct{}, 1)}
	a, err := worker.Start(context.Background(), worker.Options{Name: "node-01", Fabric: fab, Prober: &qpnProber{},
		GossipBind: "127.0.0.1:0", APIListen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	inv := a.Inventory()
	if len(inv.Live) != 1 || inv.Live[0].QPN != 1 {
		t.Fatalf("live addresses at start: %+v", inv.Live)
	}
	fab.cameBack()
	wait.For(t, "the inventory to carry the new probe port", func() bool {
		now := a.Inventory()
		return now.Generation > inv.Generation && len(now.Live) == 1 && now.Live[0].QPN == 2
	})
}
