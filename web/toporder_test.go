package web

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/topology"
)

// TestGridOrderFromTopology: with a topology that has the sweep's nodes
// (the one it ran on, when the backend keeps each sweep's), the heatmap's
// nodes are ordered by the leaf of their rail-0 HCA, one group a leaf,
// whatever the labels say; without one (or with one of another fabric)
// the label groups stay.
func TestGridOrderFromTopology(t *testing.T) {
	topo := fabricTree(t)
	m, _, _ := fabricSweep(t, topo, true)
	other, err := topology.ParseFatTree("nodes=8,rails=2,leaf=2,spines=2,prefix=x")
	if err != nil {
		t.Fatal(err)
	}
	otherTopo, err := other.Generate()
	if err != nil {
		t.Fatal(err)
	}
	byRack := "r0[n00 n02 n04 n06] r1[n01 n03 n05 n07]"
	byLeaf := "leaf-r0-00[n00 n03] leaf-r0-01[n01 n06] leaf-r0-02[n04 n07] leaf-r0-03[n02 n05]"
	cases := []struct {
		name         string
		topo         *topology.Topology
		ran          map[string]*topology.Topology // nil: the backend keeps no versions
		label, order string
	}{
		{"by leaf", topo, nil, "leaf of rail 0", byLeaf},
		{"no topology: by label", nil, nil, "rack", byRack},
		{"a topology without the sweep's nodes: by label", otherTopo, nil, "rack", byRack},
		{"by the leaves of the topology the sweep ran on", otherTopo, map[string]*topology.Topology{"s1": topo}, "leaf of rail 0", byLeaf},
		{"a sweep that ran without one: by label", topo, map[string]*topology.Topology{}, "rack", byRack},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			f.matrices["s1"] = m
			var b Backend = f
			switch {
			case tc.ran != nil:
				b = sweepTopoBackend{topoBackend{f, tc.topo}, tc.ran}
			case tc.topo != nil:
				b = topoBackend{f, tc.topo}
			}
			rec := httptest.NewRecorder()
			New(b, Options{}).Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/sweeps/s1/grid", nil))
			var g gridInfo
			if err := json.Unmarshal(rec.Body.Bytes(), &g); err != nil {
				t.Fatalf("%d %v", rec.Code, err)
			}
			var parts []string
			for _, gr := range g.Groups {
				var names []string
				for _, n := range g.Nodes[gr.Start : gr.Start+gr.Count] {
					names = append(names, n.Name)
					if n.Group != gr.Name {
						t.Errorf("node %s has group %q inside group %q", n.Name, n.Group, gr.Name)
					}
				}
				parts = append(parts, fmt.Sprintf("%s[%s]", gr.Name, strings.Join(names, " ")))
			}
			if got := strings.Join(parts, " "); g.GroupLabel != tc.label || got != tc.order {
				t.Errorf("groups by %q: %s; want by %q: %s", g.GroupLabel, got, tc.label, tc.order)
			}
		})
	}
}
