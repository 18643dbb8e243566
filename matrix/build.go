package matrix

import (
	"sort"

	"github.com/rdmamesh/rdmamesh/topology"
)

// maxRails bounds the rail numbers Build accepts, so one corrupted cell
// cannot make it allocate rollups for billions of rails. Real nodes carry at
// most a few dozen HCAs.
const maxRails = 1024

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

func (s *railSpan) end() int { return s.start + len(s.members)*(len(s.members)-1) }

// Build analyses one sweep. It does not modify its inputs; the Matrix shares
// their pointers (errors, latency figures) read-only.
//
// Every directional (src, dst, rail) among the nodes having that rail gets a
// cell, measured or not, so a missing result is visible as untested instead
// of silently shrinking the matrix. A node has a rail when its inventory
// lists a port at that index, when some cell puts it on that rail, or when
// it has no inventory at all (we then cannot know which rails it lacks).
//
// Build is Analyse with every cell materialised in Cells: at 1,024 x 8
// (8.4 M cells) that Result slice is most of the memory, so callers holding
// a big sweep use Analyse; README.md has the figures.
func Build(nodes []Node, cells []Cell, th Thresholds) *Matrix {
	return BuildFrom(nodes, nil, cells, th)
}

// BuildOn is BuildFrom on a fabric whose topology is known: the bad
// cells are also routed over its links, and cables, links and switches
// that explain them become suspects (links.go). A nil topo is BuildFrom.
func BuildOn(topo *topology.Topology, nodes []Node, src Source, cells []Cell, th Thresholds) *Matrix {
	return AnalyseOn(topo, nodes, src, cells, th).Materialize()
}

// AnalyseOn is Analyse with a topology, as BuildOn is BuildFrom.
func AnalyseOn(topo *topology.Topology, nodes []Node, src Source, cells []Cell, th Thresholds) *Matrix {
	return analyse(nodes, src, cells, th, split{topo: topo})
}

// AnalyseTraced is AnalyseOn with the sweep's traced paths (nil: none):
// on RoCE the cells between leaves are routed over what was traced, and
// links that no traced flow crossed are reported (traced.go).
func AnalyseTraced(topo *topology.Topology, tr *Traced, nodes []Node, src Source, cells []Cell, th Thresholds) *Matrix {
	return analyse(nodes, src, cells, th, split{topo: topo, traced: tr})
}

// BuildFrom is Build over the cells of src (nil: none) and cells together;
// src's indices are positions in nodes. A cell in cells wins over src's for
// the same (src, dst, rail). The result is what Build gives for src's cells
// appended to cells.
func BuildFrom(nodes []Node, src Source, cells []Cell, th Thresholds) *Matrix {
	return Analyse(nodes, src, cells, th).Materialize()
}

// Analyse is BuildFrom without Cells: the verdicts, counts, rollups and
// suspects of the whole sweep, and its cells in compact form (a byte each),
// read with NumCells, CellAt, VerdictAt and EachCell, or materialised with
// Materialize. It keeps src and cells and reads them again on demand, so
// neither may change afterwards; src's Fill is never called concurrently.
func Analyse(nodes []Node, src Source, cells []Cell, th Thresholds) *Matrix {
	return analyse(nodes, src, cells, th, split{})
}

// split is how the analysis passes share a rail out over goroutines
// (analysis.par and .stretch); the zero value is every core and stretches
// of stretchCells. Tests set it to show the output does not depend on it.
type split struct {
	par, stretch int
	topo         *topology.Topology
	traced       *Traced
}

func analyse(nodes []Node, src Source, cells []Cell, th Thresholds, cut split) *Matrix {
	th = th.orDefaults()
	ns, orig := sortedNodes(nodes)
	cells, cross := splitCross(cells)
	idx := indexCells(ns, cells)
	g := &cellGrid{idx: idx, cells: cells, src: src, orig: orig, rails: idx.rails}
	if src != nil {
		g.rails = max(g.rails, min(src.Rails(), maxRails))
		g.figs, _ = src.(FigureSource)
	}
	spans := railMembers(ns, g)
	total := 0
	for si := range spans {
		sp := &spans[si]
		sp.start = total
		m := len(sp.members)
		total += m * (m - 1)
	}
	a := &analysis{ns: ns, spans: spans, g: g, j: newJudge(ns, th, spans, total),
		st: make([]railStats, len(spans)), cells: make([]uint8, total), cv: make([]railSpread, len(spans)),
		par: cut.par, stretch: cut.stretch, topo: cut.topo, traced: cut.traced, hops: hopFindings(cut.topo, cut.traced)}
	railRollups, nodeRollups := a.judgeRails()
	a.j.release()

	stored := th
	stored.Baseline = nil // named by BaselineName; the figures would dwarf the matrix in JSON
	m := &Matrix{
		SchemaVersion: SchemaVersion,
		Nodes:         ns,
		Rails:         g.rails,
		Thresholds:    stored,
		Counts:        a.counts(),
		Ignored:       idx.ignored,
		a:             a,
	}
	m.Healthy = total > 0 && m.Counts[VerdictOK] == total
	if th.TestedOnly {
		tested := total - m.Counts[VerdictUntested]
		m.Healthy = tested > 0 && m.Counts[VerdictOK] == tested
	}
	if len(cross) > 0 {
		var ign int
		m.Cross, ign = judgeCross(ns, cross, a.j)
		m.Ignored += ign
		m.CrossCounts = countVerdicts(m.Cross)
		crossOK := m.CrossCounts[VerdictOK] == len(m.Cross)
		if th.TestedOnly && m.Counts[VerdictOK]+m.Counts[VerdictUntested] == total {
			m.Healthy = crossOK // only cross rails were planned
		} else {
			m.Healthy = m.Healthy && crossOK
		}
	}
	m.NodeRollups = nodeRollups
	m.RailRollups = railRollups
	m.Noise = a.noise(&th)
	m.Warnings = append(warnings(ns), unusedLinks(cut.topo, cut.traced)...)
	groups := findGroups(ns, th.GroupLabel)
	m.GroupLabel = groups.label
	m.Suspects = localize(m, a, groups)
	m.Warnings = append(m.Warnings, hopLossWarnings(cut.topo, a.hops, m.Suspects)...)
	for i := range m.Suspects {
		m.Suspects[i].explainNetwork(m)
	}
	if len(m.Cross) > 0 {
		m.Suspects = append(m.Suspects, crossSuspects(m.Cross)...)
	}
	quoteCounters(ns, m.Suspects)
	return m
}

// sortedNodes copies the nodes in name order, the order every output uses,
// so two coordinators with different membership orders agree byte for byte.
// A name listed twice keeps its last entry, like cells. orig[i] is where
// the i-th sorted node sits in nodes.
func sortedNodes(nodes []Node) (ns []Node, orig []int) {
	last := make(map[string]int, len(nodes))
	for i, n := range nodes {
		last[n.Name] = i
	}
	ns = make([]Node, 0, len(last))
	orig = make([]int, 0, len(last))
	for i, n := range nodes {
		if last[n.Name] != i {
			continue
		}
		if len(n.Labels) == 0 {
			n.Labels = nil // an empty map would not survive a JSON round trip
		}
		ns = append(ns, n)
		orig = append(orig, i)
	}
	sort.Stable(byName{ns, orig})
	return ns, orig
}

// byName sorts nodes and their original positions together.
type byName struct {
	ns   []Node
	orig []int
}

func (b byName) Len() int           { return len(b.ns) }
func (b byName) Less(i, j int) bool { return b.ns[i].Name < b.ns[j].Name }
func (b byName) Swap(i, j int) {
	b.ns[i], b.ns[j] = b.ns[j], b.ns[i]
	b.orig[i], b.orig[j] = b.orig[j], b.orig[i]
}

// cellIndex finds the input cell for (src, dst, rail). A flat array when it
// would be reasonably full (a finished sweep: 32 MB at 1,024 x 8 against
// 0.5 GB for a map of the same cells), a map when a sweep has barely started
// or a stray cell names a rail far beyond the inventories.
type cellIndex struct {
	n, rails int
	dense    []int32          // (rail*n + src)*n + dst → 1 + input index; 0 = none
	sparse   map[uint64]int32 // the same, for sparse inputs
	has      []bool           // node*rails + rail: a cell puts the node there
	ignored  int
}

// denseOK decides between the flat array and the map: flat when the grid
// is at most four times the cells, or small anyway (1 M slots, 4 MB). A
// variable so a test can force the map and compare the two.
var denseOK = func(grid, cells uint64) bool { return grid <= 4*cells+1<<20 }

func indexCells(ns []Node, cells []Cell) *cellIndex {
	byName := make(map[string]int32, len(ns))
	rails := 0
	for i, n := range ns {
		byName[n.Name] = int32(i)
		rails = max(rails, min(len(n.Ports), maxRails))
	}
	// Resolve names once. Cells of one sweep arrive grouped by initiator, so
	// remembering the last source saves half the lookups.
	ends := make([]int32, 2*len(cells)) // src, dst per cell; -1 = ignored
	lastSrc, lastIdx := "", int32(-1)
	idx := &cellIndex{n: len(ns)}
	for i := range cells {
		c := &cells[i]
		s, okS := lastIdx, lastIdx >= 0 && c.Src == lastSrc
		if !okS {
			s, okS = byName[c.Src]
			if okS {
				lastSrc, lastIdx = c.Src, s
			}
		}
		d, okD := byName[c.Dst]
		if !okS || !okD || s == d || c.Rail < 0 || c.Rail >= maxRails {
			ends[2*i] = -1
			idx.ignored++
			continue
		}
		ends[2*i], ends[2*i+1] = s, d
		rails = max(rails, c.Rail+1)
	}
	idx.rails = rails
	n := uint64(len(ns))
	size := n * n * uint64(rails)
	if denseOK(size, uint64(len(cells))) {
		idx.dense = make([]int32, size)
	} else {
		idx.sparse = make(map[uint64]int32, len(cells)-idx.ignored)
	}
	idx.has = make([]bool, len(ns)*rails)
	// Later duplicates win: results are idempotent upstream, but a retest of
	// the same cell is newer than the first attempt.
	for i := range cells {
		s := ends[2*i]
		if s < 0 {
			continue
		}
		d, r := ends[2*i+1], cells[i].Rail
		k := (uint64(r)*n+uint64(s))*n + uint64(d)
		if idx.dense != nil {
			idx.dense[k] = int32(i) + 1
		} else {
			idx.sparse[k] = int32(i) + 1
		}
		idx.has[int(s)*rails+r] = true
		idx.has[int(d)*rails+r] = true
	}
	return idx
}

// find returns the input index of the latest cell for (s, d, rail), or -1.
func (x *cellIndex) find(s, d, rail int) int {
	k := (uint64(rail)*uint64(x.n)+uint64(s))*uint64(x.n) + uint64(d)
	if x.dense != nil {
		return int(x.dense[k]) - 1
	}
	if v, ok := x.sparse[k]; ok {
		return int(v) - 1
	}
	return -1
}

func railMembers(ns []Node, g *cellGrid) []railSpan {
	spans := make([]railSpan, g.rails)
	for r := range spans {
		spans[r].rail = r
		for i, n := range ns {
			if len(n.Ports) == 0 || r < len(n.Ports) || g.has(i, r) {
				spans[r].members = append(spans[r].members, i)
			}
		}
	}
	return spans
}

// fillResult sets a zero Result r to the cell (s, d, rail) and returns what
// its retests showed ("" without any).
func fillResult(r *Result, ns []Node, g *cellGrid, s, d, rail int) string {
	measured := g.fill(&r.Cell, s, d, rail)
	note := ""
	if measured {
		note = resolveAttempts(&r.Cell)
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
	judgeClass(r, measured)
	return note
}

// addNote appends the retest evidence to a bad verdict's reason; a cell
// that retests cleared keeps an empty reason, like any ok cell.
func addNote(r *Result, note string) {
	if r.Verdict == VerdictOK || r.Verdict == VerdictUntested {
		return
	}
	r.Reason += " (" + note + ")"
}

func portDevice(n Node, rail int) string {
	if rail < len(n.Ports) {
		return n.Ports[rail].Device
	}
	return ""
}

var allVerdicts = [...]Verdict{VerdictOK, VerdictFailed, VerdictSlowLatency, VerdictLowBandwidth, VerdictUntested}

// countVerdicts lists every verdict, zeros included, so JSON consumers see
// the same keys whatever the sweep found.
func countVerdicts(cells []Result) map[Verdict]int {
	var n [len(allVerdicts)]int
	for i := range cells {
		for v, name := range allVerdicts {
			if cells[i].Verdict == name {
				n[v]++
				break
			}
		}
	}
	c := make(map[Verdict]int, len(allVerdicts))
	for v, name := range allVerdicts {
		c[name] = n[v]
	}
	return c
}
