package sim

import (
	"context"
	"math"
	"strings"
	"testing"
)

func TestPresets(t *testing.T) {
	cases := []struct {
		name      string
		hcas      int
		link      string
		gidIndex  int
		gidPrefix string
		gidType   string
		lid       bool
		gbps      float64 // ib_write_bw at 64 KiB
		mtu       int
	}{
		{"ib-8x400", 8, "InfiniBand", 0, "fe80::", "IB/RoCE v1", true, 392, 4096},
		{"roce-2x100", 2, "Ethernet", 3, "::ffff:10.", "RoCE v2", false, 97, 4096},
		{"roce-8x400", 8, "Ethernet", 3, "::ffff:10.", "RoCE v2", false, 388, 4096},
		{"rxe-lab", 1, "Ethernet", 3, "::ffff:10.", "RoCE v2", false, 0.159, 1024},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec, err := Preset(c.name)
			if err != nil {
				t.Fatal(err)
			}
			if got := spec.ExpectedGbps(65536); math.Abs(got-c.gbps) > 0.01*c.gbps {
				t.Errorf("64 KiB bandwidth %.1f Gb/s, want ~%.0f", got, c.gbps)
			}
			if small := spec.ExpectedGbps(8); small > 0.05*c.gbps {
				t.Errorf("8-byte messages reach %.1f Gb/s; they should be message-rate bound", small)
			}
			fab, err := New(Config{Preset: c.name})
			if err != nil {
				t.Fatal(err)
			}
			ports, err := fab.Node("node-02").Ports(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(ports) != c.hcas {
				t.Fatalf("%d ports, want %d", len(ports), c.hcas)
			}
			for i, p := range ports {
				if p.Device != spec.Device(i) || p.Rail != i || p.Port != 1 || p.LinkLayer != c.link ||
					p.State != "ACTIVE" || !p.Usable || p.MTU != c.mtu || p.GIDIndex != c.gidIndex ||
					!strings.HasPrefix(p.GID, c.gidPrefix) || p.GIDType != c.gidType || (p.LID != 0) != c.lid ||
					p.GIDReason == "" || p.Netdev == "" || p.IP == "" || p.RateGbps == 0 {
					t.Errorf("port %d: %+v", i, p)
				}
			}
		})
	}
	if _, err := Preset("ib-9x9"); err == nil || !strings.Contains(err.Error(), "ib-8x400, roce-2x100, roce-8x400, rxe-lab") {
		t.Fatalf("unknown preset error should list the names: %v", err)
	}
	if got := PresetNames(); len(got) != 4 || got[0] != "ib-8x400" {
		t.Fatalf("PresetNames = %v", got)
	}
}

func TestAddressesDistinct(t *testing.T) {
	spec, _ := Preset("ib-8x400")
	lids := map[uint16]string{}
	gids := map[string]string{}
	for _, node := range []string{"node-01", "node-02", "node-10", "gpu-a", "gpu-b"} {
		for hca := 0; hca < spec.HCAs; hca++ {
			id := node + "/" + spec.Device(hca)
			lid := spec.lid(node, hca)
			gid, _ := spec.gidEntry(node, hca, 0)
			if lid == 0 || lid > 0xBFFF || lids[lid] != "" || gids[gid] != "" {
				t.Fatalf("%s: lid %d gid %s collides or is invalid (%s %s)", id, lid, gid, lids[lid], gids[gid])
			}
			lids[lid], gids[gid] = id, id
		}
	}
	roce, _ := Preset("roce-2x100")
	if gid, typ := roce.gidEntry("node-02", 1, 3); gid != "::ffff:10.1.0.3" || typ != "RoCE v2" {
		t.Fatalf("RoCE GID 3 = %s %s", gid, typ)
	}
	if gid, typ := roce.gidEntry("node-02", 1, 7); gid != "::" || typ != "" {
		t.Fatalf("unpopulated slot = %s %s", gid, typ)
	}
}

func TestPortsShowFaults(t *testing.T) {
	fab := mustFabric(t, Config{Faults: faults(t, "node-03/mlx5_1:down", "node-03:loss=5%")})
	ports, err := fab.Node("node-03").Ports(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ports {
		down := p.Device == "mlx5_1"
		if (p.State == "DOWN") != down || p.Usable == down {
			t.Errorf("%s: state %s usable %v", p.Device, p.State, p.Usable)
		}
		if down && (p.UnusableWhy == "" || len(p.FailedChecks) != 1 || p.FailedChecks[0].Fix == "") {
			t.Errorf("down port does not say why: %+v", p)
		}
	}
}

func TestNewAndValidate(t *testing.T) {
	if _, err := New(Config{Faults: faults(t, "node-01/mlx5_9:down")}); err == nil || !strings.Contains(err.Error(), "mlx5_0..mlx5_7") {
		t.Fatalf("device outside the preset: %v", err)
	}
	if _, err := New(Config{Preset: "roce-2x100", Faults: faults(t, "node-01/mlx5_2:down")}); err == nil {
		t.Fatal("mlx5_2 accepted on a 2-HCA preset")
	}
	for _, scale := range []float64{-1, math.NaN(), math.Inf(1)} {
		if _, err := New(Config{TimeScale: scale}); err == nil {
			t.Errorf("time scale %v accepted", scale)
		}
	}
	fab := mustFabric(t, Config{Faults: faults(t, "node-02:down", "node-05~node-09:dead", "nope-1:bw=0.5", "node-20~node-30:lat=2x")})
	err := fab.Validate([]string{"node-01", "node-02", "node-03", "node-04", "node-09"})
	if err == nil {
		t.Fatal("faults naming no node accepted")
	}
	for _, want := range []string{"nope-1:bw=0.5", "node-20~node-30:lat=2x"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "node-05~node-09") || strings.Contains(err.Error(), `"node-02:down"`) {
		t.Errorf("%q blames a fault that matches", err)
	}
	if !fab.Dead("node-07") || fab.Dead("node-04") || fab.Dead("node-02") {
		t.Error("Dead disagrees with the faults")
	}
}
