package lldp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func readTestdata(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// The files are lldpcli 1.0.16's own output (Debian 12), read from an
// lldpd that heard another lldpd over two veth pairs.
func TestParseLLDPCLI(t *testing.T) {
	seen := time.Unix(1000, 0)
	ns, err := ParseLLDPCLI(readTestdata(t, "lldpcli-json0-two.json"), seen)
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 2 || len(ns["vb"]) != 1 || len(ns["vb2"]) != 1 {
		t.Fatalf("got %v, want one neighbour on each of vb and vb2", ns)
	}
	n := ns["vb2"][0]
	want := Neighbor{Interface: "vb2", ChassisID: "leaf-1-chassis", ChassisIDType: TypeLocal, PortID: "va2",
		PortIDType: TypeInterfaceName, PortDescription: "to gpu01 nic2", SystemName: "leaf-1", SystemDescription: "test leaf",
		TTL: 4 * time.Second, Source: SourceLLDPD, Seen: seen}
	if n.Label() != "leaf-1 port va2" || n.ChassisID != want.ChassisID || n.ChassisIDType != want.ChassisIDType ||
		n.PortID != want.PortID || n.PortIDType != want.PortIDType || n.PortDescription != want.PortDescription ||
		n.SystemName != want.SystemName || n.SystemDescription != want.SystemDescription || n.TTL != want.TTL ||
		n.Source != want.Source || !n.Seen.Equal(seen) || len(n.ManagementAddrs) != 1 || n.ManagementAddrs[0] != "192.0.2.1" {
		t.Errorf("got %+v\nwant %+v", n, want)
	}

	ns, err = ParseLLDPCLI(readTestdata(t, "lldpcli-json0-mac.json"), seen)
	if err != nil {
		t.Fatal(err)
	}
	if n := ns["vb"][0]; n.ChassisIDType != TypeMAC || n.ChassisID != "9a:68:32:de:dd:23" || n.PortDescription != "to gpu01" {
		t.Errorf("MAC chassis: %+v", n)
	}

	ns, err = ParseLLDPCLI(readTestdata(t, "lldpcli-json0-empty.json"), seen)
	if err != nil || len(ns) != 0 {
		t.Errorf("no neighbours: got %v, %v", ns, err)
	}
}

func TestParseLLDPCLIRefusesJSON(t *testing.T) {
	_, err := ParseLLDPCLI(readTestdata(t, "lldpcli-json-two.json"), time.Now())
	if err == nil || !strings.Contains(err.Error(), "run lldpcli -f json0 show neighbors") {
		t.Fatalf("got %v, want a refusal naming json0", err)
	}
	_, err = ParseLLDPCLI([]byte(`{"lldp":[{"interface":[{"name":"eth1","chassis":[],"port":[]}]}]}`), time.Now())
	if err == nil || !strings.Contains(err.Error(), `"eth1"`) {
		t.Errorf("an interface without chassis: %v", err)
	}
	_, err = ParseLLDPCLI([]byte(`{"lldp":[{"interface":[{"name":"eth1","chassis":[{"id":[{"type":"mac","value":"x"}]}],`+
		`"port":[{"id":[{"type":"ifname","value":"p"}],"ttl":[{"value":"many"}]}]}]}]}`), time.Now())
	if err == nil || !strings.Contains(err.Error(), `ttl "many"`) {
		t.Errorf("a bad TTL: %v", err)
	}
}

func TestLLDPDErrors(t *testing.T) {
	ctx := context.Background()
	_, err := LLDPD{Command: filepath.Join(t.TempDir(), "no-lldpcli")}.Neighbors(ctx)
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "apt-get install lldpd") {
		t.Errorf("missing lldpcli: %v", err)
	}
	cases := map[string]error{
		"2026-11-29T11:05:42 [WARN/control] unable to connect to socket /run/lldpd.socket: No such file or directory\n": ErrNotRunning,
		"[WARN/control] unable to connect to socket /run/lldpd.socket: Permission denied":                               ErrNoAccess,
	}
	for stderr, want := range cases {
		err := lldpcliError("lldpcli -f json0 show neighbors", errors.New("exit status 1"), stderr)
		if !errors.Is(err, want) {
			t.Errorf("%q: got %v, want %v", stderr, err, want)
		}
		if !strings.Contains(err.Error(), "(lldpcli -f json0 show neighbors: unable to connect to socket /run/lldpd.socket: ") ||
			strings.Contains(err.Error(), "WARN") {
			t.Errorf("%q: %v does not quote lldpcli's complaint alone", stderr, err)
		}
	}
}
