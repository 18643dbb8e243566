package cabling

import (
	"slices"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/topology"
)

// Without a plan the fabric's majority is the reference: 16 nodes x 2
// rails, 4 nodes a leaf, so each leaf has 3 leaf-mates to vote.
func TestSurvey(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, o *Observed)
		want   []string
	}{
		{"clean", func(*testing.T, *Observed) {}, nil},
		{"swapped", func(t *testing.T, o *Observed) {
			t.Helper()
			a, b := host(t, o, "node-01", 0), host(t, o, "node-01", 1)
			a.Neighbor, b.Neighbor = b.Neighbor, a.Neighbor
		}, []string{"node-01/mlx5_0 swapped leaf-r1-00:1 with node-01/mlx5_1", "node-01/mlx5_1 swapped leaf-r0-00:1 with node-01/mlx5_0"}},
		{"wrong rail", func(t *testing.T, o *Observed) {
			t.Helper()
			host(t, o, "node-02", 0).Neighbor = nbr("leaf-r1-01", "swp9")
		}, []string{"node-02/mlx5_0 wrong-rail leaf-r1-01:9"}},
		{"wrong leaf", func(t *testing.T, o *Observed) {
			t.Helper()
			host(t, o, "node-02", 0).Neighbor = nbr("leaf-r0-02", "swp9")
		}, []string{"node-02/mlx5_0 wrong-leaf leaf-r0-02:9"}},
		{"a leaf named for another rail", func(t *testing.T, o *Observed) {
			t.Helper()
			for i := range o.Hosts {
				if n := o.Hosts[i].Neighbor; n != nil && n.SystemName == "leaf-r0-03" {
					n.SystemName = "leaf-r1-07"
				}
			}
		}, []string{"node-13/mlx5_0 name-pattern leaf-r1-07:1", "node-14/mlx5_0 name-pattern leaf-r1-07:2",
			"node-15/mlx5_0 name-pattern leaf-r1-07:3", "node-16/mlx5_0 name-pattern leaf-r1-07:4"}},
		{"a switch outside the fabric's names", func(t *testing.T, o *Observed) {
			t.Helper()
			host(t, o, "node-09", 0).Neighbor = nbr("mgmt-sw-7", "ge-0/0/3")
			host(t, o, "node-09", 1).Neighbor = nil
		}, []string{"node-09/mlx5_0 name-pattern mgmt-sw-7:3", "node-09/mlx5_1 no-evidence "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, topo, err := topology.GenerateFatTree("nodes=16,rails=2,leaf=4,spines=2")
			if err != nil {
				t.Fatal(err)
			}
			obs := Observe(topo, swp)
			tc.change(t, &obs)
			r := Survey(obs)
			if got := findingsOf(r); !slices.Equal(got, tc.want) {
				t.Errorf("findings\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
			if r.Planned || len(r.PlanWouldAdd) == 0 {
				t.Errorf("a survey says what a plan would add: planned %v, %q", r.Planned, r.PlanWouldAdd)
			}
		})
	}
}
