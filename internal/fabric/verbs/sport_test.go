package verbs

import (
	"io/fs"
	"testing"
	"testing/fstest"
)

func TestSportRule(t *testing.T) {
	sys := sysfs{root: fstest.MapFS{
		"rxe0/parent":            {Data: []byte("eth1\n")},
		"rxe0/node_type":         {Data: []byte("1: CA\n")},
		"siw0/parent":            {Data: []byte("eth2\n")},
		"siw0/node_type":         {Data: []byte("4: RNIC\n")},
		"mlx5_0/node_type":       {Data: []byte("1: CA\n")},
		"mlx5_0/device/driver":   {Data: []byte("../../../../bus/pci/drivers/mlx5_core"), Mode: 0o777 | fs.ModeSymlink},
		"bnxt_re0/node_type":     {Data: []byte("1: CA\n")},
		"bnxt_re0/device/driver": {Data: []byte("../../../../bus/pci/drivers/bnxt_en"), Mode: 0o777 | fs.ModeSymlink},
	}}
	for _, tc := range []struct {
		dev, kernel string
		want        sportRule
	}{
		{"rxe0", "6.1.0-56-amd64", sportFlowLabel},
		{"rxe0", "5.18.0", sportFlowLabel},
		{"rxe0", "5.15.0-91-generic", sportUnknown}, // hashed its QP number alone
		{"siw0", "6.1.0", sportUnknown},
		{"mlx5_0", "5.14.0-362.el9.x86_64", sportFlowLabel},
		{"mlx5_0", "4.18.0-553.el8.x86_64", sportUnknown},
		{"bnxt_re0", "6.8.0", sportUnknown},
		{"rxe0", "garbage", sportUnknown},
	} {
		if got := sys.sportRuleOf(tc.dev, tc.kernel); got != tc.want {
			t.Errorf("%s on %s: rule %d, want %d", tc.dev, tc.kernel, got, tc.want)
		}
	}
}
