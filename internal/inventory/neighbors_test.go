package inventory

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/lldp"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// asked records what a lookup was asked and answers from a table.
type asked struct {
	netdevs []string
	table   NeighborTable
}

func (a *asked) lookup(netdevs []string) NeighborTable {
	a.netdevs = netdevs
	return a.table
}

func TestLookupNeighborsAsksForEthernetNetdevs(t *testing.T) {
	h := scanFixture(t, "mlx4-vpi-ib-eth")
	leaf := probe.Neighbor{Interface: "enp129s0d1", SystemName: "leaf-1", PortID: "swp9", PortIDType: lldp.TypeInterfaceName,
		ChassisID: "52:54:00:00:00:01", ChassisIDType: lldp.TypeMAC, Source: lldp.SourceFrame}
	a := &asked{table: NeighborTable{ByNetdev: map[string]probe.Neighbor{"enp129s0d1": leaf}, Frames: true, About: "LLDP frames"}}
	if ports := h.Ports(GIDPolicy{Mode: ModeAuto}); ports[0].Neighbor != nil || ports[1].Neighbor != nil {
		t.Fatalf("neighbours before any lookup: %+v", ports)
	}
	h.LookupNeighbors("", a.lookup)
	if !slices.Equal(a.netdevs, []string{"enp129s0d1"}) {
		t.Errorf("asked for %v, want the Ethernet port's netdev only", a.netdevs)
	}
	ports := h.Ports(GIDPolicy{Mode: ModeAuto})
	if n := ports[0].Neighbor; n == nil || n.Unknown != IBNeighbor {
		t.Errorf("InfiniBand port: %+v", n)
	}
	if n := ports[1].Neighbor; n == nil || *n != leaf {
		t.Errorf("Ethernet port: %+v, want %+v", n, leaf)
	}
	ports[1].Neighbor.SystemName = "changed"
	if again := h.Ports(GIDPolicy{Mode: ModeAuto}); again[1].Neighbor.SystemName != "leaf-1" {
		t.Error("a published port shares its neighbour with the host")
	}

	a.table.ByNetdev = map[string]probe.Neighbor{}
	h.LookupNeighbors("mlx4_0", a.lookup)
	if len(a.netdevs) != 0 {
		t.Errorf("--device mlx4_0 (not this host's) asked for %v", a.netdevs)
	}
	if n := h.Ports(GIDPolicy{Mode: ModeAuto})[1].Neighbor; n == nil || !strings.Contains(n.Unknown, "not looked up") {
		t.Errorf("a netdev the lookup was not asked about: %+v", n)
	}
}

func TestLookupNeighborsDedupsAndSkipsPortsWithoutNetdev(t *testing.T) {
	h := scanFixture(t, "container-no-netdev")
	a := &asked{table: NeighborTable{ByNetdev: map[string]probe.Neighbor{}}}
	h.LookupNeighbors("", a.lookup)
	if !slices.Equal(a.netdevs, []string{"ens785f0", "ens785f1"}) {
		t.Errorf("asked for %v, want each port's own netdev once, in rail order", a.netdevs)
	}
	h = scanFixture(t, "link-layer-mismatch-down")
	h.Devices[1].Ports[0].GIDs = nil // a RoCE port whose GID table names no netdev
	h.LookupNeighbors("", a.lookup)
	if n := h.Ports(GIDPolicy{Mode: ModeAuto})[1].Neighbor; n == nil || !strings.Contains(n.Unknown, "names no netdev") {
		t.Errorf("port without a netdev: %+v", n)
	}
}

func TestLLDPFramesCheck(t *testing.T) {
	frames := &asked{table: NeighborTable{ByNetdev: map[string]probe.Neighbor{}, Frames: true}}
	for _, c := range []struct {
		fixture, status, evidence string
	}{
		{"rxe-softroce", StatusOK, "includes CAP_NET_RAW"},
		{"show-gids-v1-v2", StatusWarn, "lacks CAP_NET_RAW"},
	} {
		h := scanFixture(t, c.fixture)
		h.LookupNeighbors("", frames.lookup)
		var got *probe.Check
		for _, ch := range h.Checks() {
			if ch.Name == "lldp_frames" {
				got = &ch
			}
		}
		if got == nil || got.Status != c.status || !strings.Contains(got.Evidence, c.evidence) {
			t.Errorf("%s: lldp_frames %+v, want %s with %q", c.fixture, got, c.status, c.evidence)
			continue
		}
		if c.status == StatusWarn && (!strings.Contains(got.Fix, "setcap cap_net_raw+ep") || !strings.Contains(got.Fix, "--lldp-source lldpd")) {
			t.Errorf("%s: fix %q names neither the capability nor lldpd", c.fixture, got.Fix)
		}
	}
	h := scanFixture(t, "show-gids-v1-v2")
	h.LookupNeighbors("", (&asked{table: NeighborTable{ByNetdev: map[string]probe.Neighbor{}}}).lookup)
	for _, ch := range h.Checks() {
		if ch.Name == "lldp_frames" {
			t.Errorf("lldp_frames without reading frames: %+v", ch)
		}
	}
}

func TestFixtureNeighborsRefusesPlainJSON(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("..", "lldp", "testdata", "lldpcli-json-two.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, LLDPFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = FixtureNeighbors(os.DirFS(dir))
	if err == nil || !strings.Contains(err.Error(), "lldpcli.json") || !strings.Contains(err.Error(), "-f json0") {
		t.Errorf("got %v, want an error naming the file and json0", err)
	}
	if _, err := FixtureNeighbors(os.DirFS(filepath.Join(dir, "missing"))); err != nil {
		t.Errorf("a tree without the file: %v", err)
	}
}

func TestNeighborText(t *testing.T) {
	cases := []struct {
		n     probe.Neighbor
		layer string
		want  string
	}{
		{probe.Neighbor{SystemName: "leaf-1", PortID: "swp3", PortIDType: lldp.TypeInterfaceName, PortDescription: "gpu01 eth1",
			ChassisID: "52:54:00:12:34:56", ChassisIDType: lldp.TypeMAC, TTLSeconds: 120, Source: lldp.SourceFrame}, LayerEth,
			`leaf-1 port swp3 "gpu01 eth1" (chassis 52:54:00:12:34:56, TTL 120s, from LLDP frames)`},
		{probe.Neighbor{PortID: "swp2", PortIDType: lldp.TypeInterfaceName, PortDescription: "swp2",
			ChassisID: "leaf-2", ChassisIDType: lldp.TypeLocal, Source: lldp.SourceLLDPD}, LayerEth,
			`chassis leaf-2 port swp2 (chassis local leaf-2, from lldpd)`},
		{probe.Neighbor{Unknown: "no LLDP frame on eth1 in 35s: why"}, LayerEth, "unknown: no LLDP frame on eth1 in 35s: why"},
		{probe.Neighbor{Unknown: IBNeighbor}, LayerIB, IBNeighbor},
	}
	for _, c := range cases {
		if got := NeighborText(c.n, c.layer); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

// The golden trees carry lldpcli's own output; these are the answers a
// reader of doctor acts on, checked apart from the rest of the report.
func TestDoctorNeighboursFromCapturedLLDPD(t *testing.T) {
	cases := map[string][]string{
		"rxe-softroce": {`rxe0/1 (eth0) neighbour: leaf1 port dtap1 "port 1" (chassis 52:54:00:a1:00:01, TTL 20s, from lldpd)`},
		"cx5-roce-v4-index2": {
			"rocep101s0f0/1 (enp101s0f0np0) neighbour: unknown: lldpd has heard no LLDP on enp101s0f0np0",
			`rocep101s0f1/1 (enp101s0f1np1) neighbour: leaf-r0-03 port swp12 "gpu-017 p1"`},
		"mlx4-vpi-ib-eth": {`mlx4_1/2 (enp129s0d1) neighbour: sx1036-r3 port mac 98:03:9b:4a:11:09 "Eth1/9" (chassis local MT1445X02317`,
			"mlx4_1/1: " + IBNeighbor},
		"roce-ipv6-only": {"neighbour: unknown: 2 LLDP neighbours on ens2f0np0 (leaf-07 port swp1; mgmt-sw-2 port swp2)"},
	}
	for name, want := range cases {
		var b strings.Builder
		if err := doctorFixture(t, name, GIDPolicy{Mode: ModeAuto}).WriteText(&b, false); err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: no %q in\n%s", name, w, b.String())
			}
		}
	}
}
