package inventory

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/lldp"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
)

// announcer is an LLDP listener whose interface hears n once release is
// closed (at once when it is nil), then nothing more.
type announcer struct {
	n       lldp.Neighbor
	release chan struct{}
	sent    bool
	closed  chan struct{}
}

func (a *announcer) Read(ctx context.Context) (lldp.Neighbor, error) {
	if !a.sent {
		select {
		case <-a.release:
		case <-ctx.Done():
			return lldp.Neighbor{}, ctx.Err()
		}
		a.sent = true
		a.n.Seen = time.Now()
		return a.n, nil
	}
	<-ctx.Done()
	return lldp.Neighbor{}, ctx.Err()
}

func (a *announcer) Close() error {
	close(a.closed)
	return nil
}

// switchPorts opens announcers: one per interface named in heard, a
// silent one for any other.
type switchPorts struct {
	mu    sync.Mutex
	heard map[string]*announcer
	open  []*announcer
}

func newSwitchPorts(heard map[string]lldp.Neighbor, release chan struct{}) *switchPorts {
	s := &switchPorts{heard: map[string]*announcer{}}
	for ifname, n := range heard {
		n.Interface = ifname
		s.heard[ifname] = &announcer{n: n, release: release}
	}
	return s
}

func (s *switchPorts) Open(ifname string) (lldp.Reader, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.heard[ifname]
	if a == nil {
		a = &announcer{release: make(chan struct{})} // never released
	}
	a.closed = make(chan struct{})
	s.open = append(s.open, a)
	return a, nil
}

func (s *switchPorts) allClosed(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.open {
		select {
		case <-a.closed:
		default:
			t.Errorf("a listener was left open")
		}
	}
}

var leafSwp3 = lldp.Neighbor{ChassisID: "52:54:00:12:34:56", ChassisIDType: lldp.TypeMAC, PortID: "swp3",
	PortIDType: lldp.TypeInterfaceName, PortDescription: "gpu01 eth1", SystemName: "leaf-1", TTL: 120 * time.Second, Source: lldp.SourceFrame}

func released() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

func TestCollectorWaitsBoundedForFrames(t *testing.T) {
	ports := newSwitchPorts(map[string]lldp.Neighbor{"eth1": leafSwp3}, released())
	var waited []string
	c, err := NewNeighborCollector(context.Background(), NeighborOptions{Source: NeighborsFromFrames, Wait: time.Second,
		Watch:  lldp.WatchOptions{Open: ports.Open},
		OnWait: func(netdevs []string, d time.Duration) { waited = append(slices.Clone(netdevs), d.String()) }})
	if err != nil {
		t.Fatal(err)
	}
	got := c.Lookup([]string{"eth1", "eth2"})
	c.Close()
	ports.allClosed(t)
	if !got.Frames || got.About != "LLDP frames, waited up to 1s" || !slices.Equal(waited, []string{"eth1", "eth2", "1s"}) {
		t.Errorf("table %+v, told of the wait %v", got, waited)
	}
	want := probe.Neighbor{Interface: "eth1", SystemName: "leaf-1", PortID: "swp3", PortIDType: lldp.TypeInterfaceName,
		PortDescription: "gpu01 eth1", ChassisID: "52:54:00:12:34:56", ChassisIDType: lldp.TypeMAC, TTLSeconds: 120, Source: lldp.SourceFrame}
	if got.ByNetdev["eth1"] != want {
		t.Errorf("eth1: %+v\nwant %+v", got.ByNetdev["eth1"], want)
	}
	if n := got.ByNetdev["eth2"]; n.Source != lldp.SourceFrame || !strings.HasPrefix(n.Unknown, "no LLDP frame on eth2 in 1s: the switch may not send LLDP") ||
		!strings.Contains(n.Unknown, "ConnectX") {
		t.Errorf("eth2: %+v", n)
	}
}

func TestCollectorReturnsOnceEveryNetdevHeard(t *testing.T) {
	ports := newSwitchPorts(map[string]lldp.Neighbor{"eth1": leafSwp3, "eth2": leafSwp3}, released())
	c, err := NewNeighborCollector(context.Background(), NeighborOptions{Source: NeighborsFromFrames, Wait: time.Hour,
		Watch: lldp.WatchOptions{Open: ports.Open}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	done := make(chan NeighborTable, 1)
	go func() { done <- c.Lookup([]string{"eth1", "eth2"}) }()
	select {
	case got := <-done:
		if got.ByNetdev["eth1"].Unknown != "" || got.ByNetdev["eth2"].Unknown != "" {
			t.Errorf("%+v", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Lookup kept waiting after every netdev heard its neighbour")
	}
}

// A worker's lookups never wait: they say what is known so far, in words
// that do not change until something is heard (a new inventory generation
// for every rescan would make the coordinator fetch it again and again).
func TestCollectorWithoutWaitReportsSoFar(t *testing.T) {
	release := make(chan struct{})
	ports := newSwitchPorts(map[string]lldp.Neighbor{"eth1": leafSwp3}, release)
	c, err := NewNeighborCollector(context.Background(), NeighborOptions{Source: NeighborsFromFrames,
		Watch: lldp.WatchOptions{Open: ports.Open}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first := c.Lookup([]string{"eth1"}).ByNetdev["eth1"]
	if !strings.Contains(first.Unknown, "no LLDP frame on eth1 yet (listening since ") {
		t.Fatalf("first lookup: %+v", first)
	}
	if again := c.Lookup([]string{"eth1"}).ByNetdev["eth1"]; again != first {
		t.Errorf("the answer changed with nothing heard:\n%+v\n%+v", first, again)
	}
	close(release)
	wait.For(t, "eth1's neighbour in a later lookup", func() bool {
		return c.Lookup([]string{"eth1"}).ByNetdev["eth1"].SystemName == "leaf-1"
	})
}

// fakeLLDPCLI is a command that prints what lldpcli printed in a captured
// tree, whatever it is asked.
func fakeLLDPCLI(t *testing.T, fixture string) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("testdata", fixture, LLDPFile))
	if err != nil {
		t.Fatal(err)
	}
	cmd := filepath.Join(t.TempDir(), "lldpcli")
	if err := os.WriteFile(cmd, []byte("#!/bin/sh\nexec cat '"+src+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return cmd
}

func TestCollectorAsksLLDPD(t *testing.T) {
	for _, source := range []string{NeighborsFromLLDPD, NeighborsAuto} {
		c, err := NewNeighborCollector(context.Background(), NeighborOptions{Source: source, Wait: time.Hour,
			LLDPD: lldp.LLDPD{Command: fakeLLDPCLI(t, "rxe-softroce")}})
		if err != nil {
			t.Fatal(err)
		}
		got := c.Lookup([]string{"eth0", "eth9"})
		c.Close()
		if got.Frames || got.About != "lldpd" {
			t.Errorf("%s: table %+v", source, got)
		}
		if n := got.ByNetdev["eth0"]; n.SystemName != "leaf1" || n.PortID != "dtap1" || n.Source != lldp.SourceLLDPD || n.TTLSeconds != 20 {
			t.Errorf("%s: eth0 %+v", source, n)
		}
		if n := got.ByNetdev["eth9"]; !strings.HasPrefix(n.Unknown, "lldpd has heard no LLDP on eth9") {
			t.Errorf("%s: eth9 %+v", source, n)
		}
	}
}

func TestCollectorWithoutLLDPD(t *testing.T) {
	missing := lldp.LLDPD{Command: filepath.Join(t.TempDir(), "lldpcli")}
	c, err := NewNeighborCollector(context.Background(), NeighborOptions{Source: NeighborsFromLLDPD, Wait: time.Hour, LLDPD: missing})
	if err != nil {
		t.Fatal(err)
	}
	got := c.Lookup([]string{"eth1"})
	c.Close()
	if n := got.ByNetdev["eth1"]; n.Source != lldp.SourceLLDPD || !strings.HasPrefix(n.Unknown, "lldpcli not found: lldpd is not installed") {
		t.Errorf("lldpd asked, not installed: %+v", n)
	}

	ports := newSwitchPorts(map[string]lldp.Neighbor{"eth1": leafSwp3}, released())
	c, err = NewNeighborCollector(context.Background(), NeighborOptions{Source: NeighborsAuto, Wait: time.Hour, LLDPD: missing,
		Watch: lldp.WatchOptions{Open: ports.Open}})
	if err != nil {
		t.Fatal(err)
	}
	got = c.Lookup([]string{"eth1"})
	c.Close()
	if !got.Frames || got.ByNetdev["eth1"].SystemName != "leaf-1" ||
		!strings.HasPrefix(got.About, "LLDP frames, waited up to 1h0m0s; not lldpd: lldpcli not found") {
		t.Errorf("auto without lldpd: %+v", got)
	}
}

func TestNeighborOptionsRefused(t *testing.T) {
	for _, o := range []NeighborOptions{{Source: "snmp"}, {Source: NeighborsAuto, Wait: -time.Second}} {
		c, err := NewNeighborCollector(context.Background(), o)
		if err == nil {
			c.Close()
			t.Errorf("%+v accepted", o)
			continue
		}
		if !strings.Contains(err.Error(), "LLDP") || !strings.Contains(err.Error(), "want") {
			t.Errorf("%+v: %v does not name the setting and what it takes", o, err)
		}
	}
}

func TestCollectorWithoutEthernetAsksNobody(t *testing.T) {
	ports := newSwitchPorts(nil, released())
	c, err := NewNeighborCollector(context.Background(), NeighborOptions{Source: NeighborsAuto, Wait: time.Hour,
		LLDPD: lldp.LLDPD{Command: filepath.Join(t.TempDir(), "lldpcli")}, Watch: lldp.WatchOptions{Open: ports.Open}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := c.Lookup(nil)
	if got.Frames || len(got.ByNetdev) != 0 || got.About != "no Ethernet port: LLDP not read" || len(ports.open) != 0 {
		t.Errorf("an InfiniBand-only host: %+v, %d listeners", got, len(ports.open))
	}
}
