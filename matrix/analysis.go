package matrix

import (
	"sort"
	"sync"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/topology"
)

// analysis is the compact form of an analysed sweep: per same-rail cell
// one byte (its verdict and judged class), per rail its population
// statistics, and the input it was judged from (the Source, or the cells
// Build was handed, with their index). A cell's reason, cause, fix and
// figures are regenerated on demand by judging it again from its input
// with the same statistics and thresholds; README.md has the figures.
type analysis struct {
	ns    []Node
	spans []railSpan
	g     *cellGrid
	j     *judge
	st    []railStats  // per rail
	cells []uint8      // per cell: verdict index | class code << 3
	cv    []railSpread // per rail: how noisy its population is
	// par and stretch: goroutines and cells a stretch for the passes
	// (parallel.go); 0 = the defaults. Tests set them.
	par, stretch int
	topo         *topology.Topology // nil: no link localization
	traced       *Traced            // measured paths on topo; nil: none
	hops         []hopFinding       // the cables traced's hop loss names (hoploss.go)
	rowsOnce     sync.Once
	rows         [][]int32 // memberRows
}

// The cell byte: the verdict's index in allVerdicts (3 bits) and the
// judged class's code (5 bits): 0 none, 1+i for knownClasses[i], and
// classOther for a class this table lacks (read from the cell instead).
var knownClasses = [...]probe.Class{probe.ClassOK, probe.ClassPortDown, probe.ClassRetryExceeded, probe.ClassTimeout,
	probe.ClassPeerLost, probe.ClassInvalidGID, probe.ClassMTUMismatch, probe.ClassNoNetdev, probe.ClassResource,
	probe.ClassSkipped, probe.ClassInternal, probe.ClassTester, probe.ClassUnreachable}

const (
	verdictBits = 3
	classOther  = 31
)

func packCell(v Verdict, c probe.Class) uint8 {
	if v == VerdictOK && c == probe.ClassOK { // nearly every cell: skip the search
		return 1 << verdictBits
	}
	code := uint8(classOther)
	if c == "" {
		code = 0
	}
	for i, k := range knownClasses {
		if c == k {
			code = uint8(i) + 1
			break
		}
	}
	return verdictIndex(v) | code<<verdictBits
}

func verdictIndex(v Verdict) uint8 {
	for i, name := range allVerdicts {
		if v == name {
			return uint8(i)
		}
	}
	panic("matrix: unknown verdict " + string(v))
}

func (a *analysis) verdict(k int) Verdict { return allVerdicts[a.cells[k]&(1<<verdictBits-1)] }

// class is cell k's judged class; only a class outside knownClasses costs
// a read of the cell.
func (a *analysis) class(k int) probe.Class {
	switch code := a.cells[k] >> verdictBits; code {
	case 0:
		return ""
	case classOther:
		return a.result(k).Class
	default:
		return knownClasses[code-1]
	}
}

// locate maps cell index k to its rail span and its two nodes.
func (a *analysis) locate(k int) (sp *railSpan, s, d int) {
	sp, e := a.locateEnds(k)
	return sp, sp.members[e.src], sp.members[e.dst]
}

// locateEnds maps cell index k to its rail span and its two members'
// positions on it.
func (a *analysis) locateEnds(k int) (*railSpan, ends) {
	i := sort.Search(len(a.spans), func(i int) bool { return a.spans[i].end() > k })
	sp := &a.spans[i]
	m1 := len(sp.members) - 1
	off := k - sp.start
	row, col := off/m1, off%m1
	if col >= row {
		col++
	}
	return sp, ends{int32(row), int32(col)}
}

// fill sets a zero r to cell k as Build has always given it.
func (a *analysis) fill(r *Result, k int) {
	sp, e := a.locateEnds(k)
	s, d := sp.members[e.src], sp.members[e.dst]
	note := fillResult(r, a.ns, a.g, s, d, sp.rail)
	if r.Verdict == VerdictOK {
		a.j.cell(r, sp.rail, &a.st[sp.rail], a.rate(s, d, sp.rail), a.j.baseAt(k), e)
	}
	if note != "" {
		addNote(r, note)
	}
}

func (a *analysis) result(k int) *Result {
	r := new(Result)
	a.fill(r, k)
	return r
}

func (a *analysis) rate(s, d, rail int) float64 {
	return portRate(lineRate(a.ns[s], rail), lineRate(a.ns[d], rail))
}

func (a *analysis) peeker() *peeker { return &peeker{g: a.g} }

func (a *analysis) counts() map[Verdict]int {
	var n [len(allVerdicts)]int
	for _, b := range a.cells {
		n[b&(1<<verdictBits-1)]++
	}
	c := make(map[Verdict]int, len(allVerdicts))
	for v, name := range allVerdicts {
		c[name] = n[v]
	}
	return c
}
