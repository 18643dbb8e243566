package inventory

import (
	"errors"
	"io/fs"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// minimal returns a one-port RoCE host in memory; tests edit it.
func minimal() fstest.MapFS {
	p := "sys/class/infiniband/mlx5_0/ports/1/"
	return fstest.MapFS{
		p + "state":                    {Data: []byte("4: ACTIVE\n")},
		p + "phys_state":               {Data: []byte("5: LinkUp\n")},
		p + "link_layer":               {Data: []byte("Ethernet\n")},
		p + "rate":                     {Data: []byte("100 Gb/sec (4X EDR)\n")},
		p + "lid":                      {Data: []byte("0x0\n")},
		p + "gids/0":                   {Data: []byte("fe80:0000:0000:0000:0000:0000:0000:0000\n")},
		p + "gids/1":                   {Data: []byte("0000:0000:0000:0000:0000:ffff:0a00:0001\n")},
		p + "gids/2":                   {Data: []byte("0000:0000:0000:0000:0000:0000:0000:0000\n")},
		p + "gid_attrs/types/1":        {Data: []byte("RoCE v2\n")},
		p + "gid_attrs/ndevs/1":        {Data: []byte("eth0\n")},
		"sys/class/net/eth0/mtu":       {Data: []byte("9000\n")},
		"sys/class/net/eth0/operstate": {Data: []byte("up\n")},
		"sys/class/infiniband_verbs/uverbs0/ibdev": {Data: []byte("mlx5_0\n")},
		"dev/infiniband/uverbs0":                   {},
		"proc/self/limits":                         {Data: []byte("Max locked memory unlimited unlimited bytes\n")},
		"proc/self/status":                         {Data: []byte("CapEff:\t000001ffffffffff\n")},
		"sys/module/ib_core/parameters/netns_mode": {Data: []byte("N\n")},
	}
}

func addrs(m map[string][]string) func(string) ([]netip.Prefix, error) {
	return func(nd string) ([]netip.Prefix, error) {
		var out []netip.Prefix
		for _, s := range m[nd] {
			out = append(out, netip.MustParsePrefix(s))
		}
		return out, nil
	}
}

func TestScanMinimal(t *testing.T) {
	h, err := Scan(minimal(), Options{Addrs: addrs(map[string][]string{"eth0": {"10.0.0.1/24"}})})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Devices) != 1 || len(h.Devices[0].Ports) != 1 {
		t.Fatalf("devices = %+v", h.Devices)
	}
	d := h.Devices[0]
	p := d.Ports[0]
	if len(p.GIDs) != 1 || p.GIDs[0].Index != 1 {
		t.Errorf("zero GIDs not skipped: %+v", p.GIDs)
	}
	if d.NUMANode != -1 || d.PCI != "" || d.Uverbs != "uverbs0" {
		t.Errorf("device = %+v", d)
	}
	if len(h.Warnings) != 0 {
		t.Errorf("warnings: %v", h.Warnings)
	}
	if h.env.netnsMode != "exclusive" || h.env.memlock.Soft != Unlimited || !h.hasIPCLock() {
		t.Errorf("env = %+v", h.env)
	}
	ports := h.Ports(GIDPolicy{Mode: ModeAuto})
	if len(ports) != 1 || !ports[0].Usable || ports[0].GIDIndex != 1 || ports[0].IP != "10.0.0.1" || ports[0].MTU != 4096 {
		t.Errorf("ports = %+v", ports)
	}
}

func TestScanNoDevices(t *testing.T) {
	for name, fsys := range map[string]fs.FS{
		"nothing":   fstest.MapFS{},
		"empty dir": fstest.MapFS{"sys/class/infiniband": {Mode: fs.ModeDir}},
	} {
		h, err := Scan(fsys, Options{})
		if err != nil || len(h.Devices) != 0 {
			t.Errorf("%s: %v, %+v", name, err, h)
		}
		r, err := Diagnose(h, GIDPolicy{Mode: ModeAuto}, "")
		if err != nil || r.Message != NoDevicesMessage || r.ExitCode != 1 {
			t.Errorf("%s: report %+v, %v", name, r, err)
		}
	}
}

func TestScanMissingNdevIsNotAnError(t *testing.T) {
	fsys := minimal()
	delete(fsys, "sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/1")
	h, err := Scan(fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g := h.Devices[0].Ports[0].GIDs[0]; g.Netdev != "" {
		t.Errorf("netdev = %q", g.Netdev)
	}
	p := h.Ports(GIDPolicy{Mode: ModeAuto})[0]
	if p.Usable || !strings.Contains(p.GIDReason, "1: no netdev") {
		t.Errorf("port = %+v", p)
	}
}

func TestScanTolerance(t *testing.T) {
	fsys := minimal()
	p := "sys/class/infiniband/mlx5_0/ports/1/"
	fsys[p+"rate"] = &fstest.MapFile{Data: []byte("fast\n")}
	fsys[p+"gids/3"] = &fstest.MapFile{Data: []byte("not-a-gid\n")}
	fsys[p+"link_layer"] = &fstest.MapFile{Data: []byte("Carrier Pigeon\n")}
	delete(fsys, "proc/self/limits")
	h, err := Scan(fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Warnings) != 3 {
		t.Errorf("warnings = %q", h.Warnings)
	}
	if h.Devices[0].Ports[0].LinkLayer != LayerIB {
		t.Error("unknown link layer should fall back to InfiniBand")
	}
	if h.env.memlockErr == nil {
		t.Error("missing limits not reported")
	}
	names := map[string]string{}
	for _, c := range h.Checks() {
		names[c.Name] = c.Status
	}
	if names["sysfs"] != StatusWarn || names["memlock"] != StatusWarn {
		t.Errorf("checks = %v", names)
	}
}

func TestScanPCIFromSymlink(t *testing.T) {
	fsys := minimal()
	fsys["sys/class/infiniband/mlx5_0/device"] = &fstest.MapFile{
		Data: []byte("../../../0000:af:00.1"), Mode: fs.ModeSymlink}
	h, err := Scan(fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h.Devices[0].PCI != "0000:af:00.1" {
		t.Errorf("PCI = %q", h.Devices[0].PCI)
	}
}

func TestScanNetnsFallback(t *testing.T) {
	failing := func() (string, error) { return "", errors.New("netlink: operation not supported") }
	h, _ := Scan(minimal(), Options{NetnsMode: failing})
	if h.env.netnsMode != "exclusive" || h.env.netnsErr != nil {
		t.Errorf("fallback to module parameter failed: %q %v", h.env.netnsMode, h.env.netnsErr)
	}
	fsys := minimal()
	delete(fsys, "sys/module/ib_core/parameters/netns_mode")
	h, _ = Scan(fsys, Options{NetnsMode: failing})
	if h.env.netnsErr == nil || !strings.Contains(h.env.netnsErr.Error(), "netlink") {
		t.Errorf("want the netlink error kept, got %v", h.env.netnsErr)
	}
}

func TestNaturalOrder(t *testing.T) {
	in := []string{"mlx5_10", "mlx5_2", "mlx5_1", "mlx5_11", "mlx4_0", "mlx5_01", "rxe0", "ibp10s0", "ibp9s0"}
	slices.SortFunc(in, naturalCompare)
	want := []string{"ibp9s0", "ibp10s0", "mlx4_0", "mlx5_01", "mlx5_1", "mlx5_2", "mlx5_10", "mlx5_11", "rxe0"}
	if !slices.Equal(in, want) {
		t.Errorf("got %v", in)
	}
}
