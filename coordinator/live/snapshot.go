package live

import (
	"slices"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// snapshot is the judged live cells at one moment, in the index space of
// the nodes an analysis was asked for, sorted by (initiator, rail, target):
// an immutable matrix.FigureSource, as matrix.Analyse requires (it keeps
// its source for drill-downs while the live matrix moves on).
type snapshot struct {
	m     *Matrix // for the cell texts; read-only fields only
	names []string
	rails int
	recs  []snapRec
	// first[s*rails+rail] is where initiator s's cells on rail begin in
	// recs; first[s*rails+rail+1] where they end.
	first []int32
	has   []bool // node*rails+rail: some cell puts the node on the rail
	downs map[[3]int32]downNote
}

type snapRec struct {
	src, dst int32
	rail     uint8
	class    probe.Class
	rec
}

func (m *Matrix) snapshot(nodes []matrix.Node) *snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	pos := make([]int32, len(m.names))
	for i := range pos {
		pos[i] = -1
	}
	sn := &snapshot{m: m, names: make([]string, len(nodes)), downs: map[[3]int32]downNote{}}
	for i, n := range nodes {
		sn.names[i] = n.Name
		if id, ok := m.ids[n.Name]; ok {
			pos[id] = int32(i)
		}
	}
	for k, r := range m.cells {
		s, d := pos[k.src()], pos[k.dst()]
		if s < 0 || d < 0 {
			continue // a node that is no longer a member
		}
		dn, down := m.downs[k]
		class, ok := m.fate(r, down)
		if !ok {
			continue
		}
		sn.recs = append(sn.recs, snapRec{src: s, dst: d, rail: uint8(k.rail()), class: class, rec: r})
		sn.rails = max(sn.rails, k.rail()+1)
		if down {
			sn.downs[[3]int32{s, d, int32(k.rail())}] = dn
		}
	}
	slices.SortFunc(sn.recs, func(a, b snapRec) int {
		if a.src != b.src {
			return int(a.src - b.src)
		}
		if a.rail != b.rail {
			return int(a.rail) - int(b.rail)
		}
		return int(a.dst - b.dst)
	})
	sn.first = make([]int32, len(nodes)*sn.rails+1)
	sn.has = make([]bool, len(nodes)*sn.rails)
	for i, r := range sn.recs {
		sn.first[int(r.src)*sn.rails+int(r.rail)+1] = int32(i + 1)
		sn.has[int(r.src)*sn.rails+int(r.rail)] = true
		sn.has[int(r.dst)*sn.rails+int(r.rail)] = true
	}
	for i := 1; i < len(sn.first); i++ { // slots with no cells end where the previous one did
		sn.first[i] = max(sn.first[i], sn.first[i-1])
	}
	return sn
}

func (sn *snapshot) Rails() int { return sn.rails }

func (sn *snapshot) Has(node, rail int) bool {
	return rail < sn.rails && node < len(sn.names) && sn.has[node*sn.rails+rail]
}

// find is the record of src → dst on rail, or nil.
func (sn *snapshot) find(src, dst, rail int) *snapRec {
	if rail >= sn.rails || src >= len(sn.names) {
		return nil
	}
	slot := src*sn.rails + rail
	run := sn.recs[sn.first[slot]:sn.first[slot+1]]
	if i, ok := slices.BinarySearchFunc(run, int32(dst), func(r snapRec, d int32) int { return int(r.dst - d) }); ok {
		return &run[i]
	}
	return nil
}

func (sn *snapshot) Fill(c *matrix.Cell, src, dst, rail int) bool {
	r := sn.find(src, dst, rail)
	if r == nil {
		return false
	}
	*c = sn.m.cell(sn.names[src], sn.names[dst], rail, r.rec, r.class, sn.downs[[3]int32{int32(src), int32(dst), int32(rail)}])
	return true
}

// Figures hands out an ok cell's figures without building it; a failed
// one is Whole, so the analysis reads its error through Fill.
func (sn *snapshot) Figures(f *matrix.Figures, src, dst, rail int) bool {
	r := sn.find(src, dst, rail)
	if r == nil {
		return false
	}
	*f = matrix.Figures{Class: r.class, Round: int(r.window), Whole: r.class != probe.ClassOK}
	if r.class == probe.ClassOK {
		f.Latency, f.Samples = true, int(r.answered)
		f.P50Ns, f.P99Ns = float64(r.p50)/2, float64(r.p99)/2
	}
	return true
}
