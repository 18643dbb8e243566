package matrix

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	ref "github.com/rdmamesh/rdmamesh/matrix/internal/reference"
)

// The equivalence harness: every Build and BuildFrom any test of this
// package makes is made again by the frozen reference (the matrix as it was
// before the compact analysis, matrix/internal/reference), and every
// output of the two is compared byte for byte. So the scenario, localize,
// rules, retest and random tests, and TestEquivalenceRandom's inputs, all
// prove that the compact analysis changed no verdict, reason, cause, fix or
// suspect. TestMain fails the run on any difference.

// equivMaxCells skips the comparison for the benchmarks' huge fabrics.
const equivMaxCells = 200_000

var equiv struct {
	sync.Mutex
	compared int
	failures []string
	last     *Matrix // the previous build, for Diff
	lastRef  *ref.Matrix
	// the previous build analysed compactly, and without the new steps
	lastCompact, lastLegacy *Matrix
	// builds whose suspects carry a new step's finding (so compared with
	// the reference without their suspects)
	marked int
}

func init() { afterBuild = compareWithReference }

// withoutEquivalence switches the harness off for a benchmark, which
// measures the matrix alone.
func withoutEquivalence(b *testing.B) {
	afterBuild = nil
	b.Cleanup(func() { afterBuild = compareWithReference })
}

func TestMain(m *testing.M) {
	code := m.Run()
	equiv.Lock()
	defer equiv.Unlock()
	for i, f := range equiv.failures {
		if i == 5 {
			fmt.Fprintf(os.Stderr, "... and %d more\n", len(equiv.failures)-5)
			break
		}
		fmt.Fprintln(os.Stderr, "equivalence:", f)
	}
	if len(equiv.failures) > 0 && code == 0 {
		code = 1
	}
	// A whole run must have compared something, so the harness cannot pass
	// by being switched off.
	if run := flag.Lookup("test.run"); code == 0 && run != nil && run.Value.String() == "" && equiv.compared < 300 {
		fmt.Fprintf(os.Stderr, "equivalence: only %d builds were compared with the reference\n", equiv.compared)
		code = 1
	}
	// The allowance for the new steps is narrow only while they fire on
	// few builds: on most, everything is still compared to the byte.
	whole := flag.Lookup("test.run") != nil && flag.Lookup("test.run").Value.String() == ""
	if code == 0 && whole && equiv.marked*4 > equiv.compared {
		fmt.Fprintf(os.Stderr, "equivalence: %d of %d builds carry direction, time or spread findings: too many to compare without their suspects\n",
			equiv.marked, equiv.compared)
		code = 1
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "equivalence: %d builds compared, %d of them without their suspects (new findings)\n", equiv.compared, equiv.marked)
	}
	os.Exit(code)
}

// The reference's input types are copies of ours, field for field, so its
// inputs are ours seen through its types. TestReferenceLayout holds that.
// refNodes copies field by field: Node has grown fields the reference
// never had (Counters), so the two layouts differ.
func refNodes(ns []Node) []ref.Node {
	out := make([]ref.Node, len(ns))
	for i, n := range ns {
		out[i] = ref.Node{Name: n.Name, State: n.State, Labels: n.Labels, Ports: n.Ports}
	}
	return out
}

func refCells(cs []Cell) []ref.Cell {
	return unsafe.Slice((*ref.Cell)(unsafe.Pointer(unsafe.SliceData(cs))), len(cs))
}

func refThresholds(th Thresholds) ref.Thresholds { return *(*ref.Thresholds)(unsafe.Pointer(&th)) }

type refSource struct{ s Source }

func (r refSource) Rails() int              { return r.s.Rails() }
func (r refSource) Has(node, rail int) bool { return r.s.Has(node, rail) }
func (r refSource) Fill(c *ref.Cell, src, dst, rail int) bool {
	return r.s.Fill((*Cell)(unsafe.Pointer(c)), src, dst, rail)
}

func TestReferenceLayout(t *testing.T) {
	for _, p := range [][2]any{{Cell{}, ref.Cell{}}, {Attempt{}, ref.Attempt{}},
		{Thresholds{}, ref.Thresholds{}}, {Baseline{}, ref.Baseline{}}, {BaselineCell{}, ref.BaselineCell{}}} {
		a, b := reflect.TypeOf(p[0]), reflect.TypeOf(p[1])
		if a.Size() != b.Size() || a.NumField() != b.NumField() {
			t.Fatalf("%v and %v differ in size or fields", a, b)
		}
		for i := 0; i < a.NumField(); i++ {
			fa, fb := a.Field(i), b.Field(i)
			if fa.Name != fb.Name || fa.Offset != fb.Offset || fa.Type.Size() != fb.Type.Size() ||
				strings.ReplaceAll(fa.Type.String(), "matrix.", "") != strings.ReplaceAll(fb.Type.String(), "reference.", "") {
				t.Fatalf("%v.%s (%v) and %v.%s (%v) differ", a, fa.Name, fa.Type, b, fb.Name, fb.Type)
			}
		}
	}
}

func compareWithReference(nodes []Node, src Source, cells []Cell, th Thresholds, m *Matrix) {
	if len(m.Cells) > equivMaxCells {
		return
	}
	for _, n := range nodes {
		if len(n.Counters) > 0 {
			// Counter evidence is newer than the reference: it adds the
			// nodes' counters field and words to suspects' reasons and
			// fixes (TestSuspectQuotesCounters), nothing else.
			return
		}
	}
	var rs ref.Source
	if src != nil {
		rs = refSource{src}
	}
	r := ref.BuildFrom(refNodes(nodes), rs, refCells(cells), refThresholds(th))
	// The same sweep analysed compactly, its cells regenerated on demand.
	// It reads its input again later (for the next Diff), and tests change
	// their fixtures between builds, so it gets its own copy.
	c := Analyse(append([]Node(nil), nodes...), src, append([]Cell(nil), cells...), th)
	// And with the steps the reference lacks switched off: that must be
	// the reference to the byte, compact and materialised.
	lg := analyse(append([]Node(nil), nodes...), src, append([]Cell(nil), cells...), th, diagnosis{legacy: true})
	want := refOutputs(r)
	m, c = inReferenceOrder(m), inReferenceOrder(c)
	got, gotCompact := outputs(m), outputs(c)
	gotLegacy, gotLegacyBuilt := outputs(lg), outputs(lg.Materialize())
	equiv.Lock()
	defer equiv.Unlock()
	equiv.compared++
	// The new steps may change a sweep's suspects, and what follows from
	// them (exclude lists, hostfile, NCCL env, summary, diffs), only where
	// a suspect says it found direction, time or spread; the cells, counts
	// and rollups stay the reference's whatever they found.
	marked := newDiagnosis(m) || newDiagnosis(c) || (equiv.last != nil && newDiagnosis(equiv.last))
	if marked {
		equiv.marked++
	}
	if equiv.last != nil {
		d := refDiffOutputs(ref.Diff(equiv.lastRef, r))
		want = append(want, d...)
		got = append(got, diffOutputs(Diff(equiv.last, m))...)
		gotCompact = append(gotCompact, diffOutputs(Diff(equiv.lastCompact, c))...)
		gotLegacy = append(gotLegacy, diffOutputs(Diff(equiv.lastLegacy, lg))...)
	}
	equiv.last, equiv.lastRef, equiv.lastCompact, equiv.lastLegacy = m, r, c, lg
	forms := []struct {
		name   string
		out    []string
		strict bool
	}{{"Build", got, !marked}, {"Analyse", gotCompact, !marked},
		{"legacy Analyse", gotLegacy, true}, {"legacy Materialize", gotLegacyBuilt, true}}
	for _, f := range forms {
		for i := range f.out { // the legacy materialised form has no diff with the last build
			w, g := want[i], f.out[i]
			if !f.strict {
				if !cellOutput[i] {
					continue
				}
				w, g = withoutSuspects(w), withoutSuspects(g)
			}
			if g != w {
				equiv.failures = append(equiv.failures, fmt.Sprintf("%s %d (%d nodes, %d cells): output %d differs:\n%s",
					f.name, equiv.compared, len(nodes), len(cells), i, firstDifference(w, g)))
				break
			}
		}
	}
}

// cellOutput marks the outputs (by index in outputs) that a sweep's
// suspects do not decide, or decide only through the JSON's suspects
// list: the JSON and bad-only JSON (compared without it), the bad-only
// JUnit and CSV, JUnit, CSV and the baseline.
var cellOutput = map[int]bool{0: true, 1: true, 2: true, 3: true, 4: true, 5: true, 12: true}

func newDiagnosis(m *Matrix) bool {
	for i := range m.Suspects {
		if m.Suspects[i].newDiagnosis() {
			return true
		}
	}
	return false
}

// inReferenceOrder is m with its suspects as the reference ranks them. The
// reference ranks weak suspects by size alone and knows no hard failures
// among a slow suspect's cells, while now those come first (suspectTier,
// HardFailures; TestHardFailureRanksFirst): that adds a count and changes
// the order only, so both are put back and everything else is still
// compared to the byte.
func inReferenceOrder(m *Matrix) *Matrix {
	if newDiagnosis(m) {
		return m
	}
	old := slices.Clone(m.Suspects)
	for i := range old {
		old[i].HardFailures = 0
	}
	local := len(old) // the cross-rail suspects come after the sorted ones
	if len(m.Cross) > 0 {
		local -= len(crossSuspects(m.Cross))
	}
	sortSuspects(old[:local], true)
	if reflect.DeepEqual(old, m.Suspects) {
		return m
	}
	cp := *m
	cp.Suspects = old
	return &cp
}

// withoutSuspects drops the suspects from a JSON output; other outputs
// pass unchanged.
func withoutSuspects(out string) string {
	i := strings.LastIndex(out, "\nerr=")
	if i < 0 || !strings.HasPrefix(out, "{") {
		return out
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal([]byte(out[:i]), &doc) != nil {
		return out
	}
	delete(doc, "suspects")
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return out
	}
	return string(b) + out[i:]
}

func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d\n want %q\n  got %q", i+1, a, b)
		}
	}
	return "(same lines)"
}

// outputs are every export of a matrix, as text; refOutputs the same of
// the reference's, in the same order.
func outputs(m *Matrix) []string {
	var out []string
	add := func(write func(*bytes.Buffer) error) {
		var b bytes.Buffer
		err := write(&b)
		out = append(out, fmt.Sprintf("%s\nerr=%v", b.String(), err))
	}
	add(func(b *bytes.Buffer) error { return m.WriteJSON(b) })
	add(func(b *bytes.Buffer) error { return m.BadOnly().WriteJSON(b) })
	add(func(b *bytes.Buffer) error { return m.BadOnly().WriteJUnit(b) })
	add(func(b *bytes.Buffer) error { return m.BadOnly().WriteCSV(b) })
	add(func(b *bytes.Buffer) error { return m.WriteJUnit(b) })
	add(func(b *bytes.Buffer) error { return m.WriteCSV(b) })
	add(func(b *bytes.Buffer) error { return m.WriteExclude(b, ExcludeOptions{}) })
	add(func(b *bytes.Buffer) error {
		return m.WriteExclude(b, ExcludeOptions{KeepPairs: true, KeepSlow: true, MinConfidence: 0.5})
	})
	add(func(b *bytes.Buffer) error { return m.WriteHostfile(b, HostfileOptions{Slots: 2}) })
	add(func(b *bytes.Buffer) error { return m.WriteNCCLEnv(b, NCCLOptions{}) })
	add(func(b *bytes.Buffer) error { return m.WriteNCCLEnv(b, NCCLOptions{UseRailNetdev: true, EnvFile: true}) })
	add(func(b *bytes.Buffer) error { _, err := b.WriteString(m.Summary()); return err })
	add(func(b *bytes.Buffer) error { return BaselineFrom(m, "eq").WriteJSON(b) })
	add(func(b *bytes.Buffer) error { d := Diff(m, m); return d.WriteJSON(b) })
	return out
}

func refOutputs(m *ref.Matrix) []string {
	var out []string
	add := func(write func(*bytes.Buffer) error) {
		var b bytes.Buffer
		err := write(&b)
		out = append(out, fmt.Sprintf("%s\nerr=%v", b.String(), err))
	}
	add(func(b *bytes.Buffer) error { return m.WriteJSON(b) })
	add(func(b *bytes.Buffer) error { return m.BadOnly().WriteJSON(b) })
	add(func(b *bytes.Buffer) error { return m.BadOnly().WriteJUnit(b) })
	add(func(b *bytes.Buffer) error { return m.BadOnly().WriteCSV(b) })
	add(func(b *bytes.Buffer) error { return m.WriteJUnit(b) })
	add(func(b *bytes.Buffer) error { return m.WriteCSV(b) })
	add(func(b *bytes.Buffer) error { return m.WriteExclude(b, ref.ExcludeOptions{}) })
	add(func(b *bytes.Buffer) error {
		return m.WriteExclude(b, ref.ExcludeOptions{KeepPairs: true, KeepSlow: true, MinConfidence: 0.5})
	})
	add(func(b *bytes.Buffer) error { return m.WriteHostfile(b, ref.HostfileOptions{Slots: 2}) })
	add(func(b *bytes.Buffer) error { return m.WriteNCCLEnv(b, ref.NCCLOptions{}) })
	add(func(b *bytes.Buffer) error {
		return m.WriteNCCLEnv(b, ref.NCCLOptions{UseRailNetdev: true, EnvFile: true})
	})
	add(func(b *bytes.Buffer) error { _, err := b.WriteString(m.Summary()); return err })
	add(func(b *bytes.Buffer) error { return ref.BaselineFrom(m, "eq").WriteJSON(b) })
	add(func(b *bytes.Buffer) error { d := ref.Diff(m, m); return d.WriteJSON(b) })
	return out
}

func diffOutputs(d DiffReport) []string {
	var b bytes.Buffer
	err := d.WriteJSON(&b)
	return []string{fmt.Sprintf("%s\nerr=%v", b.String(), err), d.Text()}
}

func refDiffOutputs(d ref.DiffReport) []string {
	var b bytes.Buffer
	err := d.WriteJSON(&b)
	return []string{fmt.Sprintf("%s\nerr=%v", b.String(), err), d.Text()}
}
