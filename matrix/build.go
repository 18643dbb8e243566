package matrix

import (
	"sort"
)

// maxRails bounds the rail numbers Build accepts, so one corrupted cell
// cannot make it allocate rollups for billions of rails. Real nodes carry at
// most a few dozen HCAs.
const maxRails = 1024

type cellKey struct{ src, dst, rail int }

// railSpan locates one rail's cells inside Matrix.Cells. Members are node
// indices in name order; the cell src=members[i], dst=members[j] sits at
// start + i*(len(members)-1) + j (minus one when j > i, as src == dst is
// skipped). Localization walks rows and columns through it without maps.
type railSpan struct {
	rail    int
	members []int
	start   int
}

func (s *railSpan) at(i, j int) int {
	k := s.start + i*(len(s.members)-1) + j
	if j > i {
		k--
	}
	return k
}

// Build analyses one sweep. It does not modify its inputs; the Matrix shares
// their pointers (errors, latency figures) read-only.
//
// Every directional (src, dst, rail) among the nodes having that rail gets a
// cell, measured or not, so a missing result is visible as untested instead
// of silently shrinking the matrix. A node has a rail when its inventory
// lists a port at that index, when some cell puts it on that rail, or when
// it has no inventory at all (we then cannot know which rails it lacks).
func Build(nodes []Node, cells []Cell, th Thresholds) *Matrix {
	th = th.orDefaults()
	ns := sortedNodes(nodes)
	index := make(map[string]int, len(ns))
	for i, n := range ns {
		index[n.Name] = i
	}

	rails := 0
	for _, n := range ns {
		rails = max(rails, min(len(n.Ports), maxRails))
	}
	// Later duplicates win: results are idempotent upstream, but a retest of
	// the same cell is newer than the first attempt.
	latest := make(map[cellKey]int, len(cells))
	ignored := 0
	for i := range cells {
		c := &cells[i]
		s, okS := index[c.Src]
		d, okD := index[c.Dst]
		if !okS || !okD || s == d || c.Rail < 0 || c.Rail >= maxRails {
			ignored++
			continue
		}
		latest[cellKey{s, d, c.Rail}] = i
		rails = max(rails, c.Rail+1)
	}

	spans := railMembers(ns, rails, latest)
	total := 0
	for _, sp := range spans {
		m := len(sp.members)
		total += m * (m - 1)
	}
	out := make([]Result, 0, total)
	for si := range spans {
		sp := &spans[si]
		sp.start = len(out)
		for _, s := range sp.members {
			for _, d := range sp.members {
				if s == d {
					continue
				}
				out = append(out, resultFor(ns, cells, latest, s, d, sp.rail))
			}
		}
		judgeRail(out[sp.start:], sp.rail, th)
	}

	m := &Matrix{
		Nodes:      ns,
		Rails:      rails,
		Thresholds: th,
		Cells:      out,
		Counts:     countVerdicts(out),
		Ignored:    ignored,
	}
	m.Healthy = len(out) > 0 && m.Counts[VerdictOK] == len(out)
	m.NodeRollups = nodeRollups(ns, spans, out)
	m.RailRollups = railRollups(rails, spans, out)
	m.Suspects = localize(m, spans)
	return m
}

// sortedNodes copies the nodes in name order, the order every output uses,
// so two coordinators with different membership orders agree byte for byte.
// A name listed twice keeps its last entry, like cells.
func sortedNodes(nodes []Node) []Node {
	last := make(map[string]int, len(nodes))
	for i, n := range nodes {
		last[n.Name] = i
	}
	ns := make([]Node, 0, len(last))
	for i, n := range nodes {
		if last[n.Name] != i {
			continue
		}
		if len(n.Labels) == 0 {
			n.Labels = nil // an empty map would not survive a JSON round trip
		}
		ns = append(ns, n)
	}
	sort.SliceStable(ns, func(a, b int) bool { return ns[a].Name < ns[b].Name })
	return ns
}

func railMembers(ns []Node, rails int, latest map[cellKey]int) []railSpan {
	has := make([]bool, len(ns)*rails) // node i on rail r at i*rails+r
	for i, n := range ns {
		for r := 0; r < rails; r++ {
			has[i*rails+r] = len(n.Ports) == 0 || r < len(n.Ports)
		}
	}
	for k := range latest {
		has[k.src*rails+k.rail] = true
		has[k.dst*rails+k.rail] = true
	}
	spans := make([]railSpan, rails)
	for r := range spans {
		spans[r].rail = r
		for i := range ns {
			if has[i*rails+r] {
				spans[r].members = append(spans[r].members, i)
			}
		}
	}
	return spans
}

func resultFor(ns []Node, cells []Cell, latest map[cellKey]int, s, d, rail int) Result {
	var r Result
	i, measured := latest[cellKey{s, d, rail}]
	if measured {
		r.Cell = cells[i]
	}
	// An unmeasured cell still names its ends and, from the inventory, their
	// devices, so an operator can tell which HCAs were never tested.
	r.Src, r.Dst, r.Rail = ns[s].Name, ns[d].Name, rail
	if r.SrcDevice == "" {
		r.SrcDevice = portDevice(ns[s], rail)
	}
	if r.DstDevice == "" {
		r.DstDevice = portDevice(ns[d], rail)
	}
	normalizeClass(&r.Cell)
	judgeClass(&r, measured)
	return r
}

func portDevice(n Node, rail int) string {
	if rail < len(n.Ports) {
		return n.Ports[rail].Device
	}
	return ""
}

// countVerdicts lists every verdict, zeros included, so JSON consumers see
// the same keys whatever the sweep found.
func countVerdicts(cells []Result) map[Verdict]int {
	c := map[Verdict]int{
		VerdictOK: 0, VerdictFailed: 0, VerdictSlowLatency: 0,
		VerdictLowBandwidth: 0, VerdictUntested: 0,
	}
	for i := range cells {
		c[cells[i].Verdict]++
	}
	return c
}
