package topology

import (
	"strings"
	"testing"
)

// miscableTree: 2 rails, 2 leaves a plane (node-01..04 on leaf 00 ports
// 1-4, node-05..08 on leaf 01), uplinks at leaf ports 5 (spine 00) and
// 6 (spine 01), a spine's port l+1 to leaf l.
const miscableTree = "nodes=8,rails=2,leaf=4,spines=2,oversub=2"

func TestMiscable(t *testing.T) {
	_, plan, err := GenerateFatTree(miscableTree)
	if err != nil {
		t.Fatal(err)
	}
	hca := func(node string, rail int) int {
		h, ok := plan.HCA(node, rail)
		if !ok {
			t.Fatalf("no %s rail %d", node, rail)
		}
		return h
	}
	leafOf := func(c *Topology, node string, rail int) string {
		return c.Switches[c.LeafOf(hca(node, rail))].Name
	}
	// switchesOn names the switches a flow crosses, and whether it arrives.
	switchesOn := func(c *Topology, src, dst int) (string, bool) {
		r := c.AppendRoute(nil, src, dst, 7, nil)
		var names []string
		for _, l := range r[:len(r)-1] {
			if e := c.LinkTo(Link(l)); !e.IsHCA() {
				names = append(names, c.Switches[e.Switch].Name)
			}
		}
		return strings.Join(names, " "), c.Arrives(r, dst)
	}
	n3r0, n1r0 := hca("node-03", 0), hca("node-01", 0)
	for _, tc := range []struct {
		name      string
		specs     []string
		cables    int // change in the number of cables
		unplugged []int
		check     func(t *testing.T, c *Topology)
	}{
		{"swap", []string{"swap=node-03/mlx5_0,node-03/mlx5_1"}, 0, nil, func(t *testing.T, c *Topology) {
			t.Helper()
			if a, b := leafOf(c, "node-03", 0), leafOf(c, "node-03", 1); a != "leaf-r1-00" || b != "leaf-r0-00" {
				t.Errorf("node-03's rails on %s and %s, want leaf-r1-00 and leaf-r0-00", a, b)
			}
			if !strings.Contains(c.CableName(c.HCACable(n3r0)), "leaf-r1-00:3") {
				t.Errorf("node-03/mlx5_0's cable: %s, want it at leaf-r1-00:3", c.CableName(c.HCACable(n3r0)))
			}
			if _, ok := switchesOn(c, n3r0, n1r0); ok {
				t.Error("node-03/mlx5_0 on rail 1's leaf still reaches node-01/mlx5_0")
			}
		}},
		{"another leaf", []string{"move=node-03/mlx5_0>leaf-r0-01:9"}, 0, nil, func(t *testing.T, c *Topology) {
			t.Helper()
			if got, ok := switchesOn(c, n3r0, n1r0); !ok || !strings.HasPrefix(got, "leaf-r0-01 spine-r0-0") || !strings.HasSuffix(got, " leaf-r0-00") {
				t.Errorf("node-03 -> node-01 on rail 0 crosses %q (arrives %v), want leaf-r0-01, a spine, leaf-r0-00", got, ok)
			}
		}},
		{"wrong rail's leaf", []string{"move=node-03/mlx5_0>leaf-r1-01:9"}, 0, nil, func(t *testing.T, c *Topology) {
			t.Helper()
			if got := leafOf(c, "node-03", 0); got != "leaf-r1-01" {
				t.Errorf("on %s", got)
			}
			if got, ok := switchesOn(c, n3r0, n1r0); ok {
				t.Errorf("node-03/mlx5_0 on rail 1's leaf reaches node-01/mlx5_0 over %s", got)
			}
		}},
		{"own leaf's wrong port", []string{"move=node-03/mlx5_0>leaf-r0-00:20"}, 0, nil, func(t *testing.T, c *Topology) {
			t.Helper()
			if got, ok := switchesOn(c, n3r0, n1r0); !ok || got != "leaf-r0-00" {
				t.Errorf("crosses %q (arrives %v), want leaf-r0-00 alone", got, ok)
			}
		}},
		{"uplink on another spine", []string{"uplink=leaf-r0-00:5>spine-r0-01:9"}, 0, nil, func(t *testing.T, c *Topology) {
			t.Helper()
			for range 16 {
				if got, _ := switchesOn(c, n3r0, hca("node-05", 0)); strings.Contains(got, "spine-r0-00") {
					t.Fatalf("leaf-r0-00 has no cable to spine-r0-00, yet a flow crosses %s", got)
				}
			}
		}},
		{"HCA cable missing", []string{"missing=node-03/mlx5_1"}, 0, []int{hca("node-03", 1)}, nil},
		{"HCA cable missing, by its switch port", []string{"missing=leaf-r0-00:3"}, 0, []int{n3r0}, nil},
		{"uplink missing", []string{"missing=spine-r0-00:1"}, -1, nil, func(t *testing.T, c *Topology) {
			t.Helper()
			if got, ok := switchesOn(c, n3r0, hca("node-05", 0)); !ok || got != "leaf-r0-00 spine-r0-01 leaf-r0-01" {
				t.Errorf("crosses %q, want the one spine left", got)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, unplugged, err := Miscable(plan, tc.specs)
			if err != nil {
				t.Fatal(err)
			}
			if d := len(c.Cables) - len(plan.Cables); d != tc.cables {
				t.Errorf("%d cables more than the plan, want %d", d, tc.cables)
			}
			if len(unplugged) != len(tc.unplugged) || (len(unplugged) > 0 && unplugged[0] != tc.unplugged[0]) {
				t.Errorf("unplugged %v, want %v", unplugged, tc.unplugged)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
			if got := plan.Switches[plan.LeafOf(n3r0)].Name; got != "leaf-r0-00" || plan.Switches[plan.LeafOf(n3r0)].Plane != 0 {
				t.Errorf("the plan changed: node-03/mlx5_0 on %s", got)
			}
		})
	}
}

func TestMiscableRefuses(t *testing.T) {
	_, plan, err := GenerateFatTree(miscableTree)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		specs []string
		want  string
	}{
		{[]string{"bogus=x"}, `"bogus": unknown kind; want swap=`},
		{[]string{"swap=node-03/mlx5_0"}, "want swap=NODE/DEV,NODE/DEV"},
		{[]string{"swap=node-03/mlx5_0,node-03/mlx5_0"}, "named twice"},
		{[]string{"move=node-03/mlx5_0"}, "want move=NODE/DEV>SWITCH:PORT"},
		{[]string{"move=node-99/mlx5_0>leaf-r0-01:9"}, "node-99/mlx5_0: no such HCA in the plan (HCAs are named like node-01/mlx5_0)"},
		{[]string{"move=node-03>leaf-r0-01:9"}, `"node-03": want an HCA as NODE/DEV`},
		{[]string{"move=node-03/mlx5_0>leaf-r0-01:2"}, "leaf-r0-01:2: the plan cables that port already (node-06/mlx5_0 <-> leaf-r0-01:2); name a free port"},
		{[]string{"move=node-03/mlx5_0>leaf-r9-01:9"}, `no switch "leaf-r9-01" in the plan`},
		{[]string{"move=node-03/mlx5_0>leaf-r0-01:x"}, `port "x" must be a number from 1`},
		{[]string{"move=node-03/mlx5_0>leaf-r0-01"}, `"leaf-r0-01": want SWITCH:PORT`},
		{[]string{"uplink=leaf-r0-00:3>spine-r0-00:9"}, "that is node-03/mlx5_0's cable, not one between switches; write move=node-03/mlx5_0>spine-r0-00:9"},
		{[]string{"uplink=leaf-r0-00:5>leaf-r0-00:9"}, "would join leaf-r0-00 to itself"},
		{[]string{"uplink=leaf-r0-00:9>spine-r0-00:9"}, "leaf-r0-00:9: no cable there in the plan"},
		{[]string{"missing=leaf-r0-00:20"}, "leaf-r0-00:20: nothing is cabled there in the plan"},
		{[]string{"move=node-03/mlx5_0>leaf-r0-01:9", "missing=node-03/mlx5_0"}, `is changed by "move=node-03/mlx5_0>leaf-r0-01:9" already; give one spec per cable`},
		{[]string{"move=node-03/mlx5_0>leaf-r0-01:9", "move=node-04/mlx5_0>leaf-r0-01:9"}, "leaf-r0-01:9: move=node-03/mlx5_0>leaf-r0-01:9 cables to it already"},
	} {
		_, _, err := Miscable(plan, tc.specs)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.specs[len(tc.specs)-1]) {
			t.Errorf("%v: %v, want an error naming the spec and %q", tc.specs, err, tc.want)
		}
	}
}
