package matrix

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// DiffReport says what changed between two sweeps of (mostly) the same
// fabric: cells whose verdict got worse or better, suspects that appeared
// or cleared, nodes that came or went, and each rail's headline figures.
type DiffReport struct {
	SchemaVersion   int          `json:"schema_version"`
	Old             DiffSide     `json:"old"`
	New             DiffSide     `json:"new"`
	Worse           []CellChange `json:"worse"`  // verdict got more severe
	Better          []CellChange `json:"better"` // verdict got less severe
	AddedNodes      []string     `json:"added_nodes,omitempty"`
	RemovedNodes    []string     `json:"removed_nodes,omitempty"`
	NewSuspects     []Suspect    `json:"new_suspects"`
	ClearedSuspects []Suspect    `json:"cleared_suspects"`
	Rails           []RailChange `json:"rails"` // rails present in both
}

// DiffSide is one sweep's headline.
type DiffSide struct {
	Nodes   int             `json:"nodes"`
	Rails   int             `json:"rails"`
	Cells   int             `json:"cells"`
	Healthy bool            `json:"healthy"`
	Counts  map[Verdict]int `json:"counts"`
}

// CellChange is one directional cell present in both sweeps whose verdict
// changed. Figures are 0 when that side did not measure them.
type CellChange struct {
	Rail     int     `json:"rail"`
	Src      string  `json:"src"`
	Dst      string  `json:"dst"`
	Old      Verdict `json:"old"`
	New      Verdict `json:"new"`
	OldP50Ns float64 `json:"old_p50_ns,omitempty"`
	NewP50Ns float64 `json:"new_p50_ns,omitempty"`
	OldGbps  float64 `json:"old_gbps,omitempty"`
	NewGbps  float64 `json:"new_gbps,omitempty"`
	Reason   string  `json:"reason,omitempty"` // the worse side's reason
}

// RailChange compares one rail's rollups.
type RailChange struct {
	Rail       int     `json:"rail"`
	OldBad     int     `json:"old_bad"`
	NewBad     int     `json:"new_bad"`
	OldP50Ns   float64 `json:"old_p50_ns"`
	NewP50Ns   float64 `json:"new_p50_ns"`
	OldMinGbps float64 `json:"old_min_gbps"`
	NewMinGbps float64 `json:"new_min_gbps"`
}

// severity orders verdicts for "worse": an untested cell is worse than a
// slow one (we know less) but better than a failure (nothing says broken).
var severity = map[Verdict]int{VerdictOK: 0, VerdictLowBandwidth: 1, VerdictSlowLatency: 2, VerdictUntested: 3, VerdictFailed: 4}

// Diff compares two matrices, typically an earlier saved sweep (old) and
// this one (new). Cells are matched by (rail, src, dst); cells only one
// side has count as added or removed nodes, not as changes. Linear time
// when both cell lists are in Build's order, as decoded JSON is.
func Diff(old, new *Matrix) DiffReport {
	d := DiffReport{SchemaVersion: SchemaVersion, Old: diffSide(old), New: diffSide(new),
		Worse: []CellChange{}, Better: []CellChange{}, NewSuspects: []Suspect{}, ClearedSuspects: []Suspect{}}
	d.AddedNodes, d.RemovedNodes = nodeChanges(old, new)
	a, b := old.cellOrder(), new.cellOrder()
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch c := compareKeys(old.keyAt(a[i]), new.keyAt(b[j])); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			// Verdicts first: a compact matrix materialises only the
			// cells that changed.
			if sx, sy := severity[old.VerdictAt(a[i])], severity[new.VerdictAt(b[j])]; sx != sy {
				xr, yr := old.CellAt(a[i]), new.CellAt(b[j])
				x, y := &xr, &yr
				ch := change(x, y)
				if sy > sx {
					ch.Reason = y.Reason
					d.Worse = append(d.Worse, ch)
				} else {
					ch.Reason = x.Reason
					d.Better = append(d.Better, ch)
				}
			}
			i++
			j++
		}
	}
	d.NewSuspects, d.ClearedSuspects = suspectChanges(old.Suspects, new.Suspects)
	for r := 0; r < min(len(old.RailRollups), len(new.RailRollups)); r++ {
		o, n := old.RailRollups[r], new.RailRollups[r]
		d.Rails = append(d.Rails, RailChange{Rail: r,
			OldBad: o.Failed + o.Slow + o.LowBandwidth, NewBad: n.Failed + n.Slow + n.LowBandwidth,
			OldP50Ns: o.P50Ns, NewP50Ns: n.P50Ns, OldMinGbps: o.MinGbps, NewMinGbps: n.MinGbps})
	}
	return d
}

func diffSide(m *Matrix) DiffSide {
	return DiffSide{Nodes: len(m.Nodes), Rails: m.Rails, Cells: m.NumCells(), Healthy: m.Healthy, Counts: m.Counts}
}

func change(x, y *Result) CellChange {
	ch := CellChange{Rail: y.Rail, Src: y.Src, Dst: y.Dst, Old: x.Verdict, New: y.Verdict}
	if p, ok := p50(x); ok {
		ch.OldP50Ns = p
	}
	if p, ok := p50(y); ok {
		ch.NewP50Ns = p
	}
	if g, ok := gbps(x); ok {
		ch.OldGbps = g
	}
	if g, ok := gbps(y); ok {
		ch.NewGbps = g
	}
	return ch
}

// cellKey is where a cell sits: rail, src, dst.
type cellKey struct {
	rail     int
	src, dst string
}

func compareKeys(x, y cellKey) int {
	if x.rail != y.rail {
		return x.rail - y.rail
	}
	if c := strings.Compare(x.src, y.src); c != 0 {
		return c
	}
	return strings.Compare(x.dst, y.dst)
}

// keyAt is cell k's key, without materialising a compact cell.
func (m *Matrix) keyAt(k int) cellKey {
	if m.a != nil {
		sp, s, d := m.a.locate(m.under(k))
		return cellKey{sp.rail, m.a.ns[s].Name, m.a.ns[d].Name}
	}
	c := &m.Cells[k]
	return cellKey{c.Rail, c.Src, c.Dst}
}

// cellOrder is the identity when cells are already sorted (Build's order,
// and always a compact matrix's), otherwise a sorted index, so a
// hand-edited JSON still diffs correctly.
func (m *Matrix) cellOrder() []int {
	idx := make([]int, m.NumCells())
	sorted := true
	for i := range idx {
		idx[i] = i
		if m.a == nil && i > 0 && compareKeys(m.keyAt(i-1), m.keyAt(i)) > 0 {
			sorted = false
		}
	}
	if !sorted {
		sort.SliceStable(idx, func(a, b int) bool { return compareKeys(m.keyAt(idx[a]), m.keyAt(idx[b])) < 0 })
	}
	return idx
}

func nodeChanges(old, new *Matrix) (added, removed []string) {
	was := map[string]bool{}
	for _, n := range old.Nodes {
		was[n.Name] = true
	}
	is := map[string]bool{}
	for _, n := range new.Nodes {
		is[n.Name] = true
		if !was[n.Name] {
			added = append(added, n.Name)
		}
	}
	for _, n := range old.Nodes {
		if !is[n.Name] {
			removed = append(removed, n.Name)
		}
	}
	return added, removed
}

// suspectKey identifies a suspect across sweeps: the component, not the
// figures (a dead HCA with 14 bad cells then 15 is the same suspect).
func suspectKey(s *Suspect) string {
	return strings.Join([]string{s.Kind, s.Node, s.Device, fmt.Sprint(s.Rail), s.Peer, s.Group}, "\x00")
}

func suspectChanges(old, new []Suspect) (appeared, cleared []Suspect) {
	was := map[string]bool{}
	for i := range old {
		was[suspectKey(&old[i])] = true
	}
	is := map[string]bool{}
	appeared, cleared = []Suspect{}, []Suspect{}
	for i := range new {
		k := suspectKey(&new[i])
		is[k] = true
		if !was[k] {
			appeared = append(appeared, new[i])
		}
	}
	for i := range old {
		if !is[suspectKey(&old[i])] {
			cleared = append(cleared, old[i])
		}
	}
	return appeared, cleared
}

// Changed reports whether anything an operator would act on changed.
func (d *DiffReport) Changed() bool {
	return len(d.Worse)+len(d.Better)+len(d.NewSuspects)+len(d.ClearedSuspects)+
		len(d.AddedNodes)+len(d.RemovedNodes) > 0 || d.Old.Healthy != d.New.Healthy
}

// WriteJSON writes the whole report, indented.
func (d *DiffReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(d)
}

// diffMax caps the cells the text lists per direction; the JSON has all.
const diffMax = 20

// Text is the few lines a CI log shows: worst news first.
func (d *DiffReport) Text() string {
	var b strings.Builder
	health := func(h bool) string {
		if h {
			return "HEALTHY"
		}
		return "UNHEALTHY"
	}
	fmt.Fprintf(&b, "diff: %d nodes, %d cells, %s -> %d nodes, %d cells, %s\n",
		d.Old.Nodes, d.Old.Cells, health(d.Old.Healthy), d.New.Nodes, d.New.Cells, health(d.New.Healthy))
	if !d.Changed() {
		b.WriteString("no change\n")
	}
	fmt.Fprintf(&b, "cells: %d worse, %d better\n", len(d.Worse), len(d.Better))
	for _, s := range d.NewSuspects {
		fmt.Fprintf(&b, "new suspect: %s: %s in %d/%d cells\n", s.title(), s.label(), s.Bad, s.Total)
	}
	for _, s := range d.ClearedSuspects {
		fmt.Fprintf(&b, "cleared suspect: %s\n", s.title())
	}
	writeChanges(&b, "worse", d.Worse)
	writeChanges(&b, "better", d.Better)
	for _, r := range d.Rails {
		if r.OldBad == r.NewBad && !moved(r.OldP50Ns, r.NewP50Ns) && !moved(r.OldMinGbps, r.NewMinGbps) {
			continue
		}
		fmt.Fprintf(&b, "rail %d: bad cells %d -> %d, median p50 %s -> %s, min %s -> %s Gb/s\n", r.Rail,
			r.OldBad, r.NewBad, formatNs(r.OldP50Ns), formatNs(r.NewP50Ns), sig3(r.OldMinGbps), sig3(r.NewMinGbps))
	}
	if len(d.AddedNodes) > 0 {
		fmt.Fprintf(&b, "nodes added: %s\n", strings.Join(d.AddedNodes, ", "))
	}
	if len(d.RemovedNodes) > 0 {
		fmt.Fprintf(&b, "nodes removed: %s\n", strings.Join(d.RemovedNodes, ", "))
	}
	return b.String()
}

// WriteText writes Text.
func (d *DiffReport) WriteText(w io.Writer) error {
	_, err := io.WriteString(w, d.Text())
	return err
}

func writeChanges(b *strings.Builder, what string, cs []CellChange) {
	for i, c := range cs {
		if i == diffMax {
			fmt.Fprintf(b, "... and %d more %s cell(s)\n", len(cs)-diffMax, what)
			break
		}
		fmt.Fprintf(b, "%s: rail %d %s -> %s: %s -> %s", what, c.Rail, c.Src, c.Dst, c.Old, c.New)
		if c.Reason != "" {
			b.WriteString(" (" + c.Reason + ")")
		}
		b.WriteByte('\n')
	}
}

// moved: a rollup figure changed by more than 5%, the noise of a rerun.
func moved(a, b float64) bool {
	if a == b {
		return false
	}
	return math.Abs(a-b) > 0.05*math.Max(math.Abs(a), math.Abs(b))
}
