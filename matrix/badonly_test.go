package matrix

import (
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
