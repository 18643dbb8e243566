package inventory

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func checkByName(t *testing.T, checks []probe.Check, name string) probe.Check {
	t.Helper()
	for _, c := range checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %v", name, checks)
	return probe.Check{}
}

func allChecks(t *testing.T, fsys fstest.MapFS, opts Options) []probe.Check {
	t.Helper()
	h, err := Scan(fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Diagnose(h, GIDPolicy{Mode: ModeAuto}, "")
	if err != nil {
		t.Fatal(err)
	}
	return r.Checks
}

func TestMemlockChecks(t *testing.T) {
	const (
		root  = "000001ffffffffff"
		plain = "00000000a80425fb" // docker default: no IPC_LOCK
	)
	cases := []struct {
		name      string
		limit     Memlock
		limitErr  error
		caps      string
		memlock   string
		capStatus string
		evidence  string
	}{
		{"unlimited", Memlock{Unlimited, Unlimited}, nil, plain, StatusOK, StatusOK, "RLIMIT_MEMLOCK unlimited"},
		{"docker 64k with IPC_LOCK", Memlock{64 << 10, 64 << 10}, nil, root, StatusOK, StatusOK, "lifted by CAP_IPC_LOCK"},
		{"docker 64k without", Memlock{64 << 10, 64 << 10}, nil, plain, StatusFail, StatusWarn, "64 KiB < 4 MiB needed for 1 port"},
		{"systemd 8M without", Memlock{8 << 20, 8 << 20}, nil, plain, StatusWarn, StatusWarn, "8 MiB: enough for rdmamesh on 1 port"},
		{"unreadable", Memlock{}, errors.New("EPERM"), plain, StatusWarn, StatusWarn, "unreadable: EPERM"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := minimal()
			fsys["proc/self/status"] = &fstest.MapFile{Data: []byte("CapEff:\t" + c.caps + "\n")}
			opts := Options{MemlockLimit: func() (Memlock, error) { return c.limit, c.limitErr }}
			checks := allChecks(t, fsys, opts)
			ml := checkByName(t, checks, "memlock")
			if ml.Status != c.memlock || !strings.Contains(ml.Evidence, c.evidence) {
				t.Errorf("memlock = %+v", ml)
			}
			if ml.Status != StatusOK && (ml.Cause == "" || !strings.Contains(ml.Fix, "ulimit -l unlimited")) {
				t.Errorf("memlock without cause/fix: %+v", ml)
			}
			if cp := checkByName(t, checks, "cap_ipc_lock"); cp.Status != c.capStatus {
				t.Errorf("cap_ipc_lock = %+v", cp)
			}
			h, _ := Scan(fsys, opts)
			p := h.Ports(GIDPolicy{Mode: ModeAuto})[0]
			if (c.memlock == StatusFail) == p.Usable {
				t.Errorf("usable = %v with memlock %s", p.Usable, c.memlock)
			}
			if c.memlock == StatusFail && !strings.HasPrefix(p.UnusableWhy, "memlock: ") {
				t.Errorf("unusable why = %q", p.UnusableWhy)
			}
		})
	}
}

func TestUverbsChecks(t *testing.T) {
	denied := func(string) error { return errors.New("permission denied") }
	cases := []struct {
		name   string
		edit   func(fstest.MapFS)
		access func(string) error
		status string
		want   string
	}{
		{"present", func(fstest.MapFS) {}, nil, StatusOK, "dev/infiniband/uverbs0"},
		{"no access", func(fstest.MapFS) {}, denied, StatusFail, "permission denied"},
		{"node missing", func(m fstest.MapFS) {
			delete(m, "dev/infiniband/uverbs0")
			m["dev/infiniband/uverbs3"] = &fstest.MapFile{}
		}, nil, StatusFail, "dev/infiniband/uverbs0 missing"},
		{"no /dev/infiniband", func(m fstest.MapFS) { delete(m, "dev/infiniband/uverbs0") }, nil, StatusFail, "dev/infiniband is absent"},
		{"no verbs class", func(m fstest.MapFS) { delete(m, "sys/class/infiniband_verbs/uverbs0/ibdev") }, nil, StatusFail, "infiniband_verbs is absent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := minimal()
			c.edit(fsys)
			got := checkByName(t, allChecks(t, fsys, Options{Access: c.access}), "uverbs:mlx5_0")
			if got.Status != c.status || !strings.Contains(got.Evidence, c.want) {
				t.Errorf("got %+v", got)
			}
		})
	}
}

func TestModuleChecks(t *testing.T) {
	fsys := minimal()
	fsys["sys/module/rdma_ucm/initstate"] = &fstest.MapFile{Data: []byte("live\n")}
	delete(fsys, "sys/class/infiniband_verbs/uverbs0/ibdev")
	checks := allChecks(t, fsys, Options{})
	if c := checkByName(t, checks, "kernel_module:ib_uverbs"); c.Status != StatusFail || !strings.Contains(c.Fix, "modprobe ib_uverbs") {
		t.Errorf("ib_uverbs = %+v", c)
	}
	if c := checkByName(t, checks, "kernel_module:rdma_ucm"); c.Status != StatusOK {
		t.Errorf("rdma_ucm = %+v", c)
	}
	// Built in: no sys/module entry, but the verbs class exists.
	fsys = minimal()
	fsys["sys/module/rdma_ucm/initstate"] = &fstest.MapFile{Data: []byte("live\n")}
	if c := checkByName(t, allChecks(t, fsys, Options{}), "kernel_module:ib_uverbs"); c.Status != StatusOK || !strings.Contains(c.Evidence, "built in") {
		t.Errorf("built-in ib_uverbs = %+v", c)
	}
}

func TestPortChecks(t *testing.T) {
	p := "sys/class/infiniband/mlx5_0/ports/1/"
	cases := []struct {
		name  string
		edit  func(fstest.MapFS)
		check string
		want  string // status
		text  string // substring of evidence, cause or fix
	}{
		{"mtu 1500", func(m fstest.MapFS) { m["sys/class/net/eth0/mtu"].Data = []byte("1500\n") }, "mtu:mlx5_0/1", StatusWarn, "MTU 1500 allows RoCE MTU 1024"},
		{"mtu 9000", func(fstest.MapFS) {}, "mtu:mlx5_0/1", StatusOK, "MTU 9000 allows RoCE MTU 4096"},
		{"mtu 300", func(m fstest.MapFS) { m["sys/class/net/eth0/mtu"].Data = []byte("300\n") }, "mtu:mlx5_0/1", StatusFail, "below the smallest RoCE MTU"},
		{"disabled", func(m fstest.MapFS) {
			m[p+"state"].Data, m[p+"phys_state"].Data = []byte("1: DOWN\n"), []byte("3: Disabled\n")
		}, "port_state:mlx5_0/1", StatusFail, "ip link set dev eth0 up"},
		{"training", func(m fstest.MapFS) {
			m[p+"state"].Data, m[p+"phys_state"].Data = []byte("1: DOWN\n"), []byte("4: PortConfigurationTraining\n")
		}, "port_state:mlx5_0/1", StatusFail, "link training"},
		{"polling", func(m fstest.MapFS) {
			m[p+"state"].Data, m[p+"phys_state"].Data = []byte("1: DOWN\n"), []byte("2: Polling\n")
		}, "port_state:mlx5_0/1", StatusFail, "LINK_TYPE_P1=1"},
		{"roce mode v1", func(m fstest.MapFS) {
			m["sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode"] = &fstest.MapFile{Data: []byte("IB/RoCE v1\n")}
		}, "roce_default_mode:mlx5_0/1", StatusWarn, `echo "RoCE v2" > /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode`},
		{"foreign GID", func(m fstest.MapFS) {
			m[p+"gids/4"] = &fstest.MapFile{Data: []byte("0000:0000:0000:0000:0000:ffff:0a00:0063\n")}
			m[p+"gid_attrs/types/4"] = &fstest.MapFile{Data: []byte("RoCE v2\n")}
			m[p+"gid_attrs/ndevs/4"] = &fstest.MapFile{Data: []byte("eth0\n")}
		}, "gid_netdevs:mlx5_0/1", StatusWarn, "4: 10.0.0.99 is not on eth0 here"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := minimal()
			c.edit(fsys)
			got := checkByName(t, allChecks(t, fsys, Options{Addrs: addrs(map[string][]string{"eth0": {"10.0.0.1/24"}})}), c.check)
			all := got.Evidence + " | " + got.Cause + " | " + got.Fix
			if got.Status != c.want || !strings.Contains(all, c.text) {
				t.Errorf("got %+v", got)
			}
		})
	}
}

func TestDegradedRate(t *testing.T) {
	h := scanFixture(t, "ib-8hca")
	h.Devices[3].Ports[0].Rate = Rate{Gbps: 200, Width: 2, Speed: "NDR"}
	r, err := Diagnose(h, GIDPolicy{Mode: ModeAuto}, "")
	if err != nil {
		t.Fatal(err)
	}
	c := checkByName(t, r.Checks, "rate:mlx5_5/1")
	if c.Status != StatusWarn || !strings.Contains(c.Evidence, "200 Gb/s (2X NDR) while other InfiniBand ports run 400 Gb/s") {
		t.Errorf("rate = %+v", c)
	}
	if r.ExitCode != 0 {
		t.Errorf("a degraded rate is a warning, exit = %d", r.ExitCode)
	}
}
