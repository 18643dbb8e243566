package matrix

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func TestBadOnly(t *testing.T) {
	f := newFixture(5, 2)
	f.touching("node-03", 1, fail(probe.ClassPortDown, "down", "ip link set up"))
	f.touching("node-05", 0, slow(4))
	m := f.build()
	before := *m
	b := m.BadOnly()
	bad := 0
	for _, r := range m.Cells {
		if r.Verdict != VerdictOK {
			bad++
		}
	}
	if len(b.Cells) != bad || bad == 0 || b.CellsOmitted != len(m.Cells)-bad {
		t.Fatalf("%d cells kept, %d omitted; want the %d bad of %d", len(b.Cells), b.CellsOmitted, bad, len(m.Cells))
	}
	for _, r := range b.Cells {
		if r.Verdict == VerdictOK {
			t.Fatalf("ok cell %s -> %s kept", r.Src, r.Dst)
		}
	}
	if !reflect.DeepEqual(b.Counts, m.Counts) || !reflect.DeepEqual(b.Suspects, m.Suspects) || b.Healthy != m.Healthy {
		t.Fatal("counts, suspects or healthy changed: they must stay the whole sweep's")
	}
	if !reflect.DeepEqual(before, *m) {
		t.Fatal("BadOnly modified its matrix")
	}
	if got, want := b.Summary(), m.Summary(); got != want {
		t.Fatalf("the summary must not depend on omitted cells:\n%s\n%s", got, want)
	}
	if again := b.BadOnly(); again.CellsOmitted != b.CellsOmitted || len(again.Cells) != len(b.Cells) {
		t.Fatal("BadOnly of BadOnly must change nothing")
	}
	healthy := newFixture(3, 1).build().BadOnly()
	if len(healthy.Cells) != 0 || healthy.Cells == nil || !strings.Contains(healthy.Summary(), "6 cells") {
		t.Fatalf("healthy sweep: %d cells kept, summary %q", len(healthy.Cells), healthy.Summary())
	}
}

// SummaryOnly keeps no cell, yet everything a gate writes from it (the
// summary, exclude list, host file, NCCL settings) is what the whole matrix
// gives, compact or materialised, after a JSON round trip as the gate reads
// it, and from BadOnly too (which keeps no ok cross-rail cell).
func TestSummaryOnly(t *testing.T) {
	f := newFixture(6, 2)
	f.touching("node-03", 1, fail(probe.ClassPortDown, "down", "ip link set up"))
	f.touching("node-05", 0, slow(4))
	// Cross-rail cells, all ok: the summary counts them though none is
	// listed.
	dstRail := 0
	f.cells = append(f.cells, Cell{Src: "node-01", Dst: "node-02", Rail: 1, DstRail: &dstRail, Class: probe.ClassOK,
		Latency: &probe.Latency{Samples: 10, P50Ns: 1000}})
	full := f.build()
	compact := Analyse(f.nodes, nil, append([]Cell(nil), f.cells...), DefaultThresholds())
	outputs := func(m *Matrix) []string {
		var ex, hosts, nccl strings.Builder
		if err := m.WriteExclude(&ex, ExcludeOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := m.WriteHostfile(&hosts, HostfileOptions{Slots: 8}); err != nil {
			t.Fatal(err)
		}
		if err := m.WriteNCCLEnv(&nccl, NCCLOptions{UseRailNetdev: true}); err != nil {
			t.Fatal(err)
		}
		return []string{m.Summary(), ex.String(), hosts.String(), nccl.String()}
	}
	want := outputs(full)
	if full.Healthy || !strings.Contains(want[0], "suspect") || want[1] == "" || !strings.Contains(want[0], "cross-rail cells: 1 ok") {
		t.Fatalf("the fixture has no fault to report:\n%s", want[0])
	}
	for _, m := range []*Matrix{full, compact} {
		s := m.SummaryOnly()
		if len(s.Cells) != 0 || s.Cells == nil || s.Compact() || len(s.Cross) != 0 || s.CellsOmitted != m.NumCells()+len(m.Cross) {
			t.Fatalf("%d cells and %d cross-rail kept (nil %v, compact %v), %d omitted; want none of %d", len(s.Cells), len(s.Cross),
				s.Cells == nil, s.Compact(), s.CellsOmitted, m.NumCells()+len(m.Cross))
		}
		var js strings.Builder
		if err := s.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		var read Matrix
		if err := read.ReadJSON(strings.NewReader(js.String())); err != nil {
			t.Fatal(err)
		}
		for _, got := range []*Matrix{s, &read, m.BadOnly()} {
			if g := outputs(got); !reflect.DeepEqual(g, want) {
				t.Fatalf("outputs from the summary-only matrix:\n%q\nwant:\n%q", g, want)
			}
		}
	}
}

// A compact matrix's BadOnly is a view that lists its bad cells' places:
// every reader gives what the materialised BadOnly gives, and the walks,
// which place every cell of the sweep, refuse it.
func TestBadOnlyCompactView(t *testing.T) {
	f := newFixture(6, 2)
	f.touching("node-03", 1, fail(probe.ClassPortDown, "down", "ip link set up"))
	f.touching("node-05", 0, slow(4))
	full := f.build().BadOnly()
	m := Analyse(f.nodes, nil, append([]Cell(nil), f.cells...), DefaultThresholds())
	v := m.BadOnly()
	if !v.Compact() || v.Cells != nil || v.NumCells() != len(full.Cells) || len(full.Cells) == 0 || v.CellsOmitted != full.CellsOmitted {
		t.Fatalf("view: compact %v, %d cells, %d omitted; want %d cells, %d omitted", v.Compact(), v.NumCells(), v.CellsOmitted,
			len(full.Cells), full.CellsOmitted)
	}
	for k, want := range full.Cells {
		if got := v.CellAt(k); !reflect.DeepEqual(got, want) || v.VerdictAt(k) != want.Verdict {
			t.Fatalf("cell %d: %+v, want %+v", k, got, want)
		}
		if i, ok := v.CellIndex(want.Rail, want.Src, want.Dst); !ok || i != k {
			t.Fatalf("CellIndex(%d, %s, %s) = %d, %v; want %d", want.Rail, want.Src, want.Dst, i, ok, k)
		}
	}
	if _, ok := v.CellIndex(0, "node-01", "node-02"); ok {
		t.Fatal("CellIndex found an ok cell the view does not list")
	}
	var each []Result
	if err := v.EachCell(func(_ int, r *Result) error { each = append(each, *r); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(each, full.Cells) || !reflect.DeepEqual(v.Materialize().Cells, full.Cells) {
		t.Fatal("EachCell or Materialize differ from the materialised BadOnly")
	}
	for name, write := range map[string][2]func(*strings.Builder) error{
		"json":  {func(b *strings.Builder) error { return v.WriteJSON(b) }, func(b *strings.Builder) error { return full.WriteJSON(b) }},
		"csv":   {func(b *strings.Builder) error { return v.WriteCSV(b) }, func(b *strings.Builder) error { return full.WriteCSV(b) }},
		"junit": {func(b *strings.Builder) error { return v.WriteJUnit(b) }, func(b *strings.Builder) error { return full.WriteJUnit(b) }},
	} {
		var got, want strings.Builder
		if err := write[0](&got); err != nil {
			t.Fatal(err)
		}
		if err := write[1](&want); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			n, w, g := firstDifferentLine(want.String(), got.String())
			t.Fatalf("%s of the view differs at line %d:\n want %q\n  got %q", name, n, w, g)
		}
	}
	// Diffed against another sweep either way round, the view reads as
	// the materialised BadOnly does.
	g := newFixture(6, 2)
	g.touching("node-02", 0, fail(probe.ClassRetryExceeded, "wc 12", "check the cable"))
	other, otherFull := Analyse(g.nodes, nil, append([]Cell(nil), g.cells...), DefaultThresholds()), g.build()
	if d := Diff(v, other); !reflect.DeepEqual(d, Diff(full, otherFull)) || len(d.Worse)+len(d.Better) == 0 {
		t.Fatalf("Diff(view, other) differs from the materialised BadOnly's, or is empty: %+v", d)
	}
	if !reflect.DeepEqual(Diff(other, v), Diff(otherFull, full)) {
		t.Fatal("Diff(other, view) differs from the materialised BadOnly's")
	}
	if again := v.BadOnly(); !reflect.DeepEqual(again.keep, v.keep) || again.CellsOmitted != v.CellsOmitted {
		t.Fatal("BadOnly of a view must change nothing")
	}
	if s := v.SummaryOnly(); s.Compact() || s.NumCells() != 0 || s.CellsOmitted != m.NumCells()+len(m.Cross) {
		t.Fatalf("SummaryOnly of a view: %d cells, %d omitted", s.NumCells(), s.CellsOmitted)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "BadOnly view") {
			t.Fatalf("WalkVerdicts on a view: %v; want a panic naming the view", r)
		}
	}()
	v.WalkVerdicts(0, 1, func(int, int, int, int, Verdict) {})
}
