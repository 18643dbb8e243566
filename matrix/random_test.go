package matrix

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// Random fabrics with random faults and labels: no panic, every bad cell
// is blamed on some suspect, the suspect invariants hold and every export
// works. Seeded, so a failure reproduces.
func TestRandomFabricsKeepInvariants(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	classes := []probe.Class{probe.ClassPortDown, probe.ClassRetryExceeded, probe.ClassTimeout, probe.ClassPeerLost}
	for trial := 0; trial < 300; trial++ {
		n, rails := 2+rng.Intn(11), 1+rng.Intn(3)
		f := newFixture(n, rails)
		if rng.Intn(2) == 0 {
			f.labelLeaves(1 + rng.Intn(4))
		}
		if rng.Intn(4) == 0 {
			f.nodes[rng.Intn(n)].State = "dead"
		}
		// A few structured faults, then noise.
		for k := rng.Intn(3); k > 0; k-- {
			node, rail := nodeName(rng.Intn(n)), rng.Intn(rails+1)-1
			switch rng.Intn(3) {
			case 0:
				f.touching(node, rail, fail(classes[rng.Intn(len(classes))], "x", ""))
			case 1:
				f.touching(node, rail, slow(3+rng.Float64()*5))
			default:
				f.touching(node, rail, scaleBW(0.3))
			}
		}
		noise := rng.Float64() * 0.3
		for i := range f.cells {
			if rng.Float64() < noise {
				fail(probe.ClassRetryExceeded, "noise", "")(&f.cells[i])
			}
		}
		f.drop(func(*Cell) bool { return rng.Float64() < 0.05 })
		th := DefaultThresholds()
		if rng.Intn(2) == 0 {
			th.RobustZ = 5
		}
		m := Build(f.nodes, f.cells, th)
		name := fmt.Sprintf("trial %d (%d nodes, %d rails)", trial, n, rails)
		t.Run(name, func(t *testing.T) {
			checkSuspectInvariants(t, m)
			bad, blamed := 0, 0
			for i := range m.Cells {
				if isBad(&m.Cells[i]) {
					bad++
				}
			}
			for _, s := range m.Suspects {
				blamed += s.Bad
			}
			if blamed < bad {
				t.Fatalf("%d bad cells, suspects explain %d:\n%s", bad, blamed, m.Summary())
			}
			var buf bytes.Buffer
			for _, write := range []func() error{
				func() error { return m.WriteJSON(&buf) },
				func() error { return m.WriteJUnit(&buf) },
				func() error { return m.WriteCSV(&buf) },
				func() error { return m.WriteExclude(&buf, ExcludeOptions{}) },
				func() error { return m.WriteHostfile(&buf, HostfileOptions{Slots: 2}) },
				func() error { return m.WriteNCCLEnv(&buf, NCCLOptions{}) },
			} {
				if err := write(); err != nil {
					t.Fatal(err)
				}
			}
			if d := Diff(m, m); d.Changed() {
				t.Fatalf("a matrix differs from itself:\n%s", d.Text())
			}
		})
	}
}
