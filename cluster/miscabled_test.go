package cluster

import (
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/cabling"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/topology"
)

// A miscabled fabric is miscabled for everything physical: its tests
// route, its flows trace and its ports hear LLDP over the cables as they
// run, while the coordinator judges against the plan. Each case runs a
// sweep and reads the coordinator's cabling report: the verdicts named,
// on the ports named, and no other HCA port or cable judged wrong.
func TestCablingMiscabledFabric(t *testing.T) {
	for _, tc := range []struct {
		name, tree string
		spec       string
		want       map[string]cabling.Verdict // by finding end; an unexpected cable by its switches, A~B
		found      map[string]string          // what some of those ends were found at
		check      func(t *testing.T, cl *Cluster, sweep string)
	}{
		{"swapped HCAs", cablingTree, "swap=node-03/mlx5_0,node-03/mlx5_1",
			map[string]cabling.Verdict{"node-03/mlx5_0": cabling.Swapped, "node-03/mlx5_1": cabling.Swapped},
			map[string]string{"node-03/mlx5_0": "leaf-r1-00:3", "node-03/mlx5_1": "leaf-r0-00:3"}, nil},
		{"another leaf", cablingTree, "move=node-03/mlx5_0>leaf-r0-01:9",
			map[string]cabling.Verdict{"node-03/mlx5_0": cabling.WrongLeaf}, map[string]string{"node-03/mlx5_0": "leaf-r0-01:9"},
			func(t *testing.T, cl *Cluster, sweep string) {
				t.Helper()
				// Planned leaf mates, cabled apart: their flow crosses a spine.
				tr, err := cl.Coord.TraceCell(t.Context(), sweep, api.TraceRequest{Src: "node-03", Dst: "node-01", Rail: 0})
				var hops []string
				for _, h := range tr.Hops {
					hops = append(hops, h.Switch)
				}
				if got := strings.Join(hops, " "); err != nil || !strings.HasPrefix(got, "leaf-r0-01 spine-r0-0") || !strings.HasSuffix(got, " leaf-r0-00") {
					t.Errorf("node-03 -> node-01 on rail 0 traced %q (%v), want leaf-r0-01, a spine, leaf-r0-00", got, err)
				}
			}},
		{"wrong rail's leaf", cablingTree, "move=node-03/mlx5_0>leaf-r1-01:9",
			map[string]cabling.Verdict{"node-03/mlx5_0": cabling.WrongRail}, map[string]string{"node-03/mlx5_0": "leaf-r1-01:9"},
			func(t *testing.T, cl *Cluster, sweep string) {
				t.Helper()
				// No path joins it to rail 0's other HCAs: its tests fail.
				m, _ := cl.Coord.Matrix(sweep)
				lost := 0
				for _, c := range m.Materialize().Cells {
					if c.Rail == 0 && (c.Src == "node-03" || c.Dst == "node-03") {
						if !c.Class.Failed() {
							t.Errorf("%s -> %s on rail 0 passed over no path", c.Src, c.Dst)
						}
						lost++
					}
				}
				if lost == 0 {
					t.Error("the sweep tested node-03 on rail 0 with nobody")
				}
			}},
		{"own leaf's wrong port", cablingTree, "move=node-03/mlx5_0>leaf-r0-00:9",
			map[string]cabling.Verdict{"node-03/mlx5_0": cabling.WrongPort}, map[string]string{"node-03/mlx5_0": "leaf-r0-00:9"}, nil},
		{"HCA cable missing", cablingTree, "missing=node-03/mlx5_1",
			map[string]cabling.Verdict{"node-03/mlx5_1": cabling.Missing}, nil, nil},
		// Paths name switches, not ports, and no switch's table is read:
		// an uplink is seen where it reaches a switch the plan does not
		// join its leaf to. Here leaf-r0-p0-00's first uplink reaches pod
		// 1's spine, which then carries pod 1's flows to it straight down.
		{"uplink on another pod's spine", "nodes=8,rails=1,leaf=2,spines=2,pods=2,cores=2,addrs=10.255.0.0/24",
			"uplink=leaf-r0-p0-00:3>spine-r0-p1-00:9",
			map[string]cabling.Verdict{"leaf-r0-p0-00~spine-r0-p1-00": cabling.Unexpected}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rails := 2
			if strings.Contains(tc.tree, "rails=1") {
				rails = 1
			}
			cl := startOn(t, tc.tree, Options{Rails: rails, Miscabled: []string{tc.spec}})
			info, _ := sweepWith(t, cl, api.SweepRequest{Mode: "quick"})
			rep, src, ok := cl.Coord.Cabling(info.ID)
			if !ok || src.Paths == 0 {
				t.Fatalf("no cabling report from the sweep's traced paths (source %+v)", src)
			}
			checkFindings(t, rep, tc.want, tc.found)
			if tc.check != nil {
				tc.check(t, cl, info.ID)
			}
		})
	}
}

// checkFindings wants each end of want judged so (found where found says)
// and every other port ok or without evidence.
func checkFindings(t *testing.T, rep *cabling.Report, want map[string]cabling.Verdict, found map[string]string) {
	t.Helper()
	seen := map[string]bool{}
	for _, f := range rep.Ports {
		end := f.End
		if f.Verdict == cabling.Unexpected && f.Node == "" {
			end = min(f.End, f.Found) + "~" + max(f.End, f.Found)
		}
		v, named := want[end]
		switch {
		case named && f.Verdict == v:
			seen[end] = true
			if at, ok := found[end]; ok && f.Found != at {
				t.Errorf("%s: %s found at %s, want %s", f.End, v, f.Found, at)
			}
		case named:
			t.Errorf("%s: %s (%s), want %s", f.End, f.Verdict, f.Detail, v)
		case f.Verdict != cabling.OK && f.Verdict != cabling.NoEvidence:
			t.Errorf("%s: %s (found %s: %s), want ok or no-evidence", f.End, f.Verdict, f.Found, f.Detail)
		}
	}
	for end, v := range want {
		if !seen[end] {
			t.Errorf("%s: no %s finding", end, v)
		}
	}
}

// A spec that does not fit the plan, or a fabric without one, stops the
// cluster before anything starts, with the spec named.
func TestMiscabledRefused(t *testing.T) {
	_, topo, err := topology.GenerateFatTree(cablingTree)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Nodes: 8, Rails: 2, Topology: topo, Miscabled: []string{"move=node-03/mlx5_0>leaf-r0-01:1"}},
			`miscabling "move=node-03/mlx5_0>leaf-r0-01:1": leaf-r0-01:1: the plan cables that port already`},
		{Options{Nodes: 8, Miscabled: []string{"missing=node-03/mlx5_0"}}, "a fabric without a topology has no cables to miscable"},
	} {
		if _, err := Start(t.Context(), tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.o.Miscabled, err, tc.want)
		}
	}
}
