package inventory

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func TestPortsPublishedShape(t *testing.T) {
	auto := GIDPolicy{Mode: ModeAuto}
	cases := []struct {
		fixture string
		want    []string // per rail: device/port index usable
	}{
		{"ib-8hca", []string{"mlx5_0/1 0 true", "mlx5_3/1 0 true", "mlx5_4/1 0 true", "mlx5_5/1 0 true",
			"mlx5_6/1 0 true", "mlx5_9/1 0 true", "mlx5_10/1 0 true", "mlx5_11/1 0 true"}},
		{"container-no-netdev", []string{"mlx5_0/1 7 true", "mlx5_1/1 -1 false"}},
		{"link-layer-mismatch-down", []string{"mlx5_0/1 0 false", "mlx5_1/1 3 false"}},
		{"mlx4-vpi-ib-eth", []string{"mlx4_1/1 0 true", "mlx4_1/2 1 true"}},
		{"ib-no-sm", []string{"mlx5_0/1 0 false", "mlx5_1/1 0 false"}},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			ports := scanFixture(t, c.fixture).Ports(auto)
			if len(ports) != len(c.want) {
				t.Fatalf("got %d ports, want %d", len(ports), len(c.want))
			}
			for i, p := range ports {
				got := portLabel(p) + " " + strconv.Itoa(p.GIDIndex) + " " + boolStr(p.Usable)
				if p.Rail != i || got != c.want[i] {
					t.Errorf("rail %d: got %q (rail %d), want %q", i, got, p.Rail, c.want[i])
				}
				if !p.Usable && (p.UnusableWhy == "" || len(p.FailedChecks) == 0) {
					t.Errorf("%s unusable without a why or failed checks: %+v", portLabel(p), p)
				}
				for _, fc := range p.FailedChecks {
					if fc.Status == StatusOK {
						t.Errorf("%s carries an ok check %s", portLabel(p), fc.Name)
					}
				}
			}
		})
	}
}

func TestContainerPortCarriesDeviceFailure(t *testing.T) {
	p := scanFixture(t, "container-no-netdev").Ports(GIDPolicy{Mode: ModeAuto})[1]
	var names []string
	for _, c := range p.FailedChecks {
		names = append(names, c.Name)
	}
	want := "gid:mlx5_1/1 gid_netdevs:mlx5_1/1 uverbs:mlx5_1"
	if strings.Join(names, " ") != want {
		t.Errorf("failed checks = %v, want %s", names, want)
	}
}

// TestInventory8HCA checks the inventory a worker publishes for an 8-HCA
// node: well-formed JSON that round-trips. It is far over memberlist's
// 512-byte meta cap, which is why it travels by push/pull and the API.
func TestInventory8HCA(t *testing.T) {
	inv := scanFixture(t, "ib-8hca").Inventory("gpu-node-017", GIDPolicy{Mode: ModeAuto})
	inv.Generation, inv.APIAddr, inv.Provider = 3, "10.0.0.17:7946", "verbs"
	b, err := json.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) {
		t.Fatal("invalid JSON")
	}
	var back probe.Inventory
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&back); err != nil {
		t.Fatal(err)
	}
	if len(back.Ports) != 8 || back.Version != probe.Version || back.Node != "gpu-node-017" {
		t.Fatalf("round trip: %+v", back)
	}
	for i, p := range back.Ports {
		if p.Rail != i || !p.Usable || p.GIDIndex != 0 || p.LID == 0 || p.RateGbps != 400 {
			t.Errorf("port %d: %+v", i, p)
		}
	}
	t.Logf("8-HCA probe.Inventory JSON: %d bytes (%d checks)", len(b), len(back.Checks))
}

func TestDiagnoseDeviceFilter(t *testing.T) {
	h := scanFixture(t, "container-no-netdev")
	r, err := Diagnose(h, GIDPolicy{Mode: ModeAuto}, "mlx5_0")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Ports) != 1 || len(r.Devices) != 1 || r.ExitCode != 0 {
		t.Errorf("filtered report: %d ports, %d devices, exit %d", len(r.Ports), len(r.Devices), r.ExitCode)
	}
	for _, c := range r.Checks {
		if strings.Contains(c.Name, "mlx5_1") {
			t.Errorf("check %s leaked through the filter", c.Name)
		}
	}
	_, err = Diagnose(h, GIDPolicy{Mode: ModeAuto}, "mlx5_9")
	var ude *UnknownDeviceError
	if !errors.As(err, &ude) || !strings.Contains(err.Error(), "have: mlx5_0, mlx5_1") {
		t.Errorf("unknown device: %v", err)
	}
}

func TestWriteTextColor(t *testing.T) {
	r := doctorFixture(t, "ib-no-sm", GIDPolicy{Mode: ModeAuto})
	var plain, color bytes.Buffer
	if err := r.WriteText(&plain, false); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteText(&color, true); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(plain.Bytes(), []byte("\x1b[")) {
		t.Error("plain output has escape codes")
	}
	if !bytes.Contains(color.Bytes(), []byte("\x1b[31mfail\x1b[0m")) {
		t.Error("coloured output lacks a red fail")
	}
}

func TestGIDTableShowGids(t *testing.T) {
	h := scanFixture(t, "show-gids-v1-v2")
	var b bytes.Buffer
	if err := h.WriteGIDTable(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 11 || !strings.HasPrefix(lines[0], "DEV") || lines[10] != "n_gids_found=8" {
		t.Fatalf("table:\n%s", b.String())
	}
	if f := strings.Fields(lines[2]); strings.Join(f, " ") != "mlx5_4 1 0 fe80:0000:0000:0000:ee0d:9aff:fe2f:c21a v1 p1p1" {
		t.Errorf("row 0 = %q (seed 001's show_gids line)", lines[2])
	}
	b.Reset()
	if err := h.WriteGIDTableJSON(&b); err != nil {
		t.Fatal(err)
	}
	var rows []GIDRow
	if err := json.Unmarshal(b.Bytes(), &rows); err != nil || len(rows) != 8 || rows[3].IPv4 != "10.10.4.14" || rows[3].Ver != "v2" {
		t.Errorf("json rows = %+v, %v", rows, err)
	}
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
