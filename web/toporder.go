package web

import (
	"strconv"

	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/topology"
)

// nodeGroups names each node's switch group (index in m.Nodes; "" for
// none) and what the groups are. With a topology that has the sweep's
// nodes, a node's group is the leaf its HCA of the lowest such rail is
// cabled to: the fabric as cabled, not as labelled, so a dead leaf is a
// band even when no label names leaves. One rail orders every rail's
// heatmap, so the grid's layers share one order; in a rail-optimized
// tree a node sits at the same place under every rail's leaves, and the
// band of one rail's leaf is the band of the others'. Otherwise the
// groups are the matrix's label groups (Matrix.GroupLabel).
func nodeGroups(m *matrix.Matrix, t *topology.Topology) (label string, group []string) {
	if label, group, ok := leafGroups(m, t); ok {
		return label, group
	}
	group = make([]string, len(m.Nodes))
	if m.GroupLabel != "" {
		for i, n := range m.Nodes {
			group[i] = n.Labels[m.GroupLabel]
		}
	}
	return m.GroupLabel, group
}

// leafGroups is nodeGroups from the topology; ok is false when t is nil
// or has none of m's nodes.
func leafGroups(m *matrix.Matrix, t *topology.Topology) (label string, group []string, ok bool) {
	if t == nil {
		return "", nil, false
	}
	for r := range max(m.Rails, 0) {
		group = make([]string, len(m.Nodes))
		for i, n := range m.Nodes {
			if h, found := t.HCA(n.Name, r); found {
				group[i] = t.Switches[t.LeafOf(h)].Name
				ok = true
			}
		}
		if ok {
			return "leaf of rail " + strconv.Itoa(r), group, true
		}
	}
	return "", nil, false
}
