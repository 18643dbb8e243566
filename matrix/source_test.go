package matrix

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// mapSource is a Source over cells keyed by node positions in nodes.
type mapSource struct {
	at    map[[3]int]Cell
	has   map[[2]int]bool
	rails int
}

func newMapSource(nodes []Node, cells []Cell) *mapSource {
	pos := map[string]int{}
	for i, n := range nodes {
		pos[n.Name] = i
	}
	s := &mapSource{at: map[[3]int]Cell{}, has: map[[2]int]bool{}}
	for _, c := range cells {
		a, b := pos[c.Src], pos[c.Dst]
		s.at[[3]int{a, b, c.Rail}] = c
		s.has[[2]int{a, c.Rail}], s.has[[2]int{b, c.Rail}] = true, true
		s.rails = max(s.rails, c.Rail+1)
	}
	return s
}

func (s *mapSource) Rails() int           { return s.rails }
func (s *mapSource) Has(node, r int) bool { return s.has[[2]int{node, r}] }
func (s *mapSource) Fill(c *Cell, a, b, r int) bool {
	v, ok := s.at[[3]int{a, b, r}]
	if ok {
		*c = v
	}
	return ok
}

// BuildFrom over a Source must give exactly what Build gives over the same
// cells as a slice, whatever the node order, with gaps, failures, a cell on
// a rail the inventory lacks, cross-rail cells and a duplicate handed as a
// slice cell (which wins).
func TestBuildFromSourceMatchesBuild(t *testing.T) {
	f := newFixture(7, 3)
	f.touching("node-04", 1, fail(probe.ClassPortDown, "down", "ip link set up"))
	f.touching("node-06", AllRails, slow(3))
	f.drop(func(c *Cell) bool { return c.Src == "node-02" && c.Rail == 2 })
	f.nodes[1].Ports = f.nodes[1].Ports[:2] // its rail-2 cells still place it there
	f.nodes[0], f.nodes[5] = f.nodes[5], f.nodes[0]
	grid := f.cells
	dstRail := 0
	extra := []Cell{
		{Src: "node-01", Dst: "node-03", Rail: 1, DstRail: &dstRail, Class: probe.ClassOK, Latency: &probe.Latency{P50Ns: 1100}},
		{Src: "node-05", Dst: "node-02", Rail: 0, Class: probe.ClassTimeout, Error: &probe.Error{Class: probe.ClassTimeout, Cause: "newer"}},
		{Src: "node-09", Dst: "node-02", Rail: 0, Class: probe.ClassOK}, // no such node: ignored
	}
	want := Build(f.nodes, append(append([]Cell(nil), grid...), extra...), DefaultThresholds())
	got := BuildFrom(f.nodes, newMapSource(f.nodes, grid), extra, DefaultThresholds())
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("BuildFrom differs from Build:\n%s\n%s", want.Summary(), got.Summary())
	}
	if c := got.Cells[0]; got.Ignored != 1 || len(got.Cross) != 1 || c.Src != "node-01" {
		t.Fatalf("ignored %d, cross %d, first cell %s→%s: the fixture lost its edge cases", got.Ignored, len(got.Cross), c.Src, c.Dst)
	}
	for _, r := range got.Cells {
		if r.Src == "node-05" && r.Dst == "node-02" && r.Rail == 0 && r.Class != probe.ClassTimeout {
			t.Fatalf("the slice cell must win over the source's: %+v", r.Cell)
		}
	}
	// Nothing but the source: the same as Build over its cells.
	if m := BuildFrom(f.nodes, newMapSource(f.nodes, grid), nil, DefaultThresholds()); !reflect.DeepEqual(m, Build(f.nodes, grid, DefaultThresholds())) {
		t.Fatal("BuildFrom without slice cells differs from Build")
	}
}

// splitSource hands a random share of the same-rail cells to a Source and
// keeps the rest (and every odd cell) as the slice BuildFrom also takes.
func splitSource(rng *rand.Rand, nodes []Node, cells []Cell) (Source, []Cell) {
	known := map[string]bool{}
	for _, nd := range nodes {
		known[nd.Name] = true
	}
	var grid, rest []Cell
	share := rng.Float64()
	for _, c := range cells {
		if known[c.Src] && known[c.Dst] && c.Src != c.Dst && c.Rail >= 0 && c.Rail < 8 && c.DstRail == nil && rng.Float64() < share {
			grid = append(grid, c)
		} else {
			rest = append(rest, c)
		}
	}
	switch rng.Intn(3) {
	case 0:
		return figureSource{newMapSource(nodes, grid)}, rest
	case 1:
		return newCodedSource(newMapSource(nodes, grid)), rest
	}
	return newMapSource(nodes, grid), rest
}

// codedSource is a figureSource whose p50s are codes into a table, as the
// coordinator's grid hands them out (p50Column keeps the codes). Some cells
// come without a code and some with a wrong one: both must be read back as
// the figure itself.
type codedSource struct {
	figureSource
	table []float64
	code  map[float64]uint16
}

var _ CodedSource = codedSource{}

func newCodedSource(m *mapSource) codedSource {
	s := codedSource{figureSource: figureSource{m}, code: map[float64]uint16{}}
	for _, c := range m.at {
		if c.Latency == nil {
			continue
		}
		if _, ok := s.code[c.Latency.P50Ns]; !ok && len(s.table) < 1<<16 {
			s.code[c.Latency.P50Ns] = uint16(len(s.table))
			s.table = append(s.table, c.Latency.P50Ns)
		}
	}
	return s
}

func (s codedSource) P50Table() []float64 { return s.table }

func (s codedSource) Figures(f *Figures, a, b, r int) bool {
	if !s.figureSource.Figures(f, a, b, r) {
		return false
	}
	code, ok := s.code[f.P50Ns]
	switch k := a + 3*b + 5*r; {
	case !f.Latency || !ok || k%5 == 0: // uncoded
	case k%7 == 0 && len(s.table) > 1: // a code of another figure
		f.P50Coded, f.P50Code = true, uint16((int(code)+1)%len(s.table))
	default:
		f.P50Coded, f.P50Code = true, code
	}
	return true
}

// figureSource is a mapSource that also hands out figures, as the
// coordinator's grid does: Analyse then reads whole cells only for errors
// and retests.
type figureSource struct{ *mapSource }

func (s figureSource) Figures(f *Figures, a, b, r int) bool {
	c, ok := s.at[[3]int{a, b, r}]
	if !ok {
		return false
	}
	*f = Figures{Class: c.Class, Round: c.Round, Whole: c.Error != nil || len(c.Retests) > 0}
	if c.Latency != nil {
		f.Latency, f.P50Ns, f.P99Ns, f.Samples = true, c.Latency.P50Ns, c.Latency.P99Ns, c.Latency.Samples
	}
	if c.Bandwidth != nil {
		f.Bandwidth, f.Gbps, f.MsgRate = true, c.Bandwidth.Gbps, c.Bandwidth.MsgRate
	}
	return true
}
