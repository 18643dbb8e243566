package verbs

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestMTU(t *testing.T) {
	for e, b := range map[int]int{1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096, 0: 0, 6: 0} {
		if mtuBytes(e) != b {
			t.Errorf("mtuBytes(%d) = %d, want %d", e, mtuBytes(e), b)
		}
	}
	if mtuEnum(4096) != 5 || mtuEnum(1024) != 3 || mtuEnum(1500) != 3 {
		t.Fatal("mtuEnum")
	}
	if pathMTU(4096, 1024) != 1024 || pathMTU(1024, 4096) != 1024 || pathMTU(2048, 0) != 2048 {
		t.Fatal("pathMTU must be the smaller active MTU")
	}
}

func TestRate(t *testing.T) {
	fsys := fstest.MapFS{
		"mlx5_0/ports/1/rate":                 {Data: []byte("400 Gb/sec (4X NDR)\n")},
		"rxe0/ports/1/rate":                   {Data: []byte("2.5 Gb/sec (1X SDR)\n")},
		"rxe0/ports/1/gid_attrs/types/1":      {Data: []byte("RoCE v2\n")},
		"rxe0/ports/1/gid_attrs/ndevs/1":      {Data: []byte("eth0\n")},
		"broken/ports/1/rate":                 {Data: []byte("\n")},
		"mlx5_1/ports/1/gid_attrs/types/0":    {Data: []byte("IB/RoCE v1\n")},
		"mlx5_1/ports/1/gid_attrs/ndevs/junk": {Data: []byte("x")},
	}
	s := sysfs{root: fsys}
	if r, ok := s.rate("mlx5_0", 1); !ok || r != 400 {
		t.Fatalf("rate = %v %v", r, ok)
	}
	if r, ok := s.rate("rxe0", 1); !ok || r != 2.5 {
		t.Fatalf("rate = %v %v", r, ok)
	}
	if _, ok := s.rate("broken", 1); ok {
		t.Fatal("empty rate parsed")
	}
	if s.gidType("rxe0", 1, 1) != "RoCE v2" || s.gidNetdev("rxe0", 1, 1) != "eth0" || s.gidNetdev("mlx5_1", 1, 0) != "" {
		t.Fatal("gid attrs")
	}
	if rateFromAttr(2, 128) != 400 || rateFromAttr(2, 32) != 100 {
		t.Fatal("rateFromAttr")
	}
}

func TestSortDevices(t *testing.T) {
	got := []string{"mlx5_10", "mlx5_2", "rxe0", "mlx5_1", "bnxt_re0"}
	sortDevices(got)
	want := []string{"bnxt_re0", "mlx5_1", "mlx5_2", "mlx5_10", "rxe0"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v", got)
	}
}

func TestNoProvider(t *testing.T) {
	if e := noProvider(sysfs{root: fstest.MapFS{}}, nil); e != nil {
		t.Fatalf("no devices in sysfs is not a provider problem: %v", e)
	}
	busy := sysfs{root: fstest.MapFS{"mlx5_0/ports/1/state": {Data: []byte("4: ACTIVE")}}}
	if e := noProvider(busy, map[string]removedDev{"mlx5_0": {}}); e != nil {
		t.Fatalf("a device being removed is not a missing provider: %v", e)
	}
	e := noProvider(busy, nil)
	if e == nil || !strings.Contains(e.Cause, "mlx5_0") || !strings.Contains(e.Fix, "ibverbs-providers") {
		t.Fatalf("got %v", e)
	}
}
