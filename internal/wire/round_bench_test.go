package wire

import (
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// roundCells is a 1,024-node round's grid cells: 512 pairs, both
// directions, 8 rails, figures a few codes apart, as the leader's round
// encoder gets them.
func roundCells() []GridCell {
	cells := make([]GridCell, 0, 512*16)
	for p := range 512 {
		for dir := range 2 {
			s, d := p, 1023-p
			if dir == 1 {
				s, d = d, s
			}
			for r := range 8 {
				j := float64((s*31+d)%97+r) / 10
				l := &probe.Latency{Samples: 1000, MinNs: 990 + j, P50Ns: 1010 + j, P90Ns: 1030 + j, P99Ns: 1100 + j,
					P999Ns: 1300 + j, MaxNs: 2000 + j, StdevNs: 12 + j/10}
				q := LatCodes(l)
				cells = append(cells, GridCell{Src: s, Dst: d, Rail: r, Round: 9, Class: probe.ClassOK, Latency: l, LatQ: &q})
			}
		}
	}
	return cells
}

// BenchmarkRoundEncoder is one 1,024-node round's entry on the leader:
// its grid cells added, then finished with the codes kept for the FSM.
func BenchmarkRoundEncoder(b *testing.B) {
	cells := roundCells()
	b.ReportAllocs()
	for b.Loop() {
		e := NewRoundEncoder("sweep-1", 9)
		for i := range cells {
			e.Grid(&cells[i])
		}
		_, rc, err := e.FinishKeep(nil)
		if err != nil {
			b.Fatal(err)
		}
		rc.Release()
	}
}

// BenchmarkRoundEncoderGrid is the cells added alone.
func BenchmarkRoundEncoderGrid(b *testing.B) {
	cells := roundCells()
	for b.Loop() {
		e := NewRoundEncoder("sweep-1", 9)
		for i := range cells {
			e.Grid(&cells[i])
		}
		roundEncoders.Put(e)
	}
}
