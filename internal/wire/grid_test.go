package wire

import (
	"bytes"
	"cmp"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func TestGridSlot(t *testing.T) {
	for _, g := range [][2]int{{1, 1}, {3, 2}, {8, 8}, {9, 3}, {17, 8}, {64, 8}, {70, 1}} {
		n, rails := g[0], g[1]
		seen := map[int32]bool{}
		for src := range n {
			for dst := range n {
				blocks := map[int32]bool{}
				for rail := range rails {
					s := GridSlot(n, rails, src, dst, rail)
					if seen[s] || !InGrid(n, rails, s) {
						t.Fatalf("n=%d rails=%d: (%d, %d, %d) has slot %d, seen %v, in grid %v", n, rails, src, dst, rail, s, seen[s], InGrid(n, rails, s))
					}
					seen[s] = true
					blocks[s>>BlockBits] = true
					if a, b, c := GridCoords(n, rails, s); a != src || b != dst || c != rail {
						t.Fatalf("n=%d rails=%d: slot %d of (%d, %d, %d) reads back as (%d, %d, %d)", n, rails, s, src, dst, rail, a, b, c)
					}
				}
				// The point of the layout: one direction of a pair on 8
				// rails writes one block.
				if rails == 8 && len(blocks) != 1 {
					t.Fatalf("n=%d: %d -> %d spans %d blocks", n, src, dst, len(blocks))
				}
			}
		}
		inGrid := 0
		for s := range int32(GridBlocks(n, rails) * BlockLen) {
			if InGrid(n, rails, s) {
				inGrid++
			}
		}
		if inGrid != n*n*rails || InGrid(n, rails, -1) || GridSlots(n, rails) > GridBlocks(n, rails)*BlockLen {
			t.Fatalf("n=%d rails=%d: %d slots in the grid, want %d", n, rails, inGrid, n*n*rails)
		}
	}
}

// gridSlotV2 is the rail-major slot of snapshot versions 1 and 2.
func gridSlotV2(n, src, dst, rail int) int32 { return int32((rail*n+src)*n + dst) }

// railMajor is s as snapshot versions 1 and 2 laid out its grid. Blocks
// and attempts are new; the rest is shared with s.
func railMajor(s SnapshotSweep) SnapshotSweep {
	n, rails := len(s.Nodes), GridRails(s.Nodes)
	to := func(slot int32) int32 {
		src, dst, rail := GridCoords(n, rails, slot)
		return gridSlotV2(n, src, dst, rail)
	}
	s.Attempts = append([]SlotAttempts(nil), s.Attempts...)
	for i := range s.Attempts {
		s.Attempts[i].Slot = to(s.Attempts[i].Slot)
	}
	if s.Blocks == nil {
		return s
	}
	out := make([]*GridBlock, (rails*n*n+BlockLen-1)/BlockLen)
	for bi, b := range s.Blocks {
		for j := range BlockLen {
			if b == nil || b.Class[j] == 0 {
				continue
			}
			v := to(int32(bi*BlockLen + j))
			if out[v>>BlockBits] == nil {
				out[v>>BlockBits] = &GridBlock{}
			}
			moveCell(out[v>>BlockBits], int(v)&(BlockLen-1), b, j)
		}
	}
	s.Blocks = out
	return s
}

// writeV2 writes sweeps as version 2 did: version 3's stream with the
// grid rail by rail.
func writeV2(t *testing.T, sweeps []SnapshotSweep) []byte {
	t.Helper()
	old := make([]SnapshotSweep, len(sweeps))
	for i := range sweeps {
		old[i] = railMajor(sweeps[i])
	}
	var b bytes.Buffer
	if err := writeSnapshot(&b, old, testTrailer(), snapshotV2); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func readSweeps(t *testing.T, b []byte) []SnapshotSweep {
	t.Helper()
	var got []SnapshotSweep
	if err := ReadSnapshot(bytes.NewReader(b), func(s *SnapshotSweep) error {
		s.nBlocks = 0
		got = append(got, *s)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// A coordinator upgraded in place reads its older self's rail-major grid
// into today's slots.
func TestSnapshotReadsVersion2(t *testing.T) {
	want := testSnapshot()
	if got := readSweeps(t, writeV2(t, want)); !reflect.DeepEqual(got, want) {
		t.Fatalf("version 2 read back:\n got %+v\nwant %+v", got, want)
	}
	// Random grids, compared cell by cell: odd node counts (padded rows),
	// rail counts that straddle blocks, samples that differ in a block.
	rng := rand.New(rand.NewPCG(5, 6))
	for _, g := range [][2]int{{5, 3}, {9, 8}, {13, 1}, {24, 4}} {
		s := randomGrid(rng, g[0], g[1])
		got := readSweeps(t, writeV2(t, []SnapshotSweep{s}))
		if len(got) != 1 {
			t.Fatalf("read %d sweeps", len(got))
		}
		sameCells(t, &got[0], &s)
		if !reflect.DeepEqual(got[0].Attempts, s.Attempts) {
			t.Fatalf("attempts: got %+v, want %+v", got[0].Attempts, s.Attempts)
		}
	}
}

// randomGrid is a sweep of n nodes on rails with about half its cells.
func randomGrid(rng *rand.Rand, n, rails int) SnapshotSweep {
	s := SnapshotSweep{Info: testSnapshot()[0].Info, Classes: []probe.Class{probe.ClassOK, probe.ClassTimeout},
		Errors: []probe.Error{{Class: probe.ClassTimeout, Cause: "slow"}}}
	for i := range n {
		s.Nodes = append(s.Nodes, Node{Name: string(rune('a' + i)), Ports: make([]probe.Port, rails)})
	}
	s.Blocks = make([]*GridBlock, GridBlocks(n, rails))
	for src := range n {
		for dst := range n {
			for rail := range rails {
				if src == dst || rng.IntN(2) == 0 {
					continue
				}
				slot := GridSlot(n, rails, src, dst, rail)
				from := &GridBlock{Round: [BlockLen]uint16{uint16(rng.IntN(100))}, Samples: uint32(1000 + rng.IntN(2)),
					Lat: &[BlockLen]LatQ{{1, uint16(rng.IntN(1 << 16)), 3, 4, 5, 6, 7}}}
				from.Class[0] = 1 | FlagLat
				if rng.IntN(4) == 0 {
					from.Class[0], from.Err = 2, &[BlockLen]uint16{1}
				}
				if rng.IntN(3) == 0 {
					from.Class[0] |= FlagBW
					from.BW = &[BlockLen]BWQ{{Bytes: 1 << 16, Q: [3]uint16{uint16(rng.IntN(500)), 2, 3}}}
				}
				b := s.Blocks[slot>>BlockBits]
				if b == nil {
					b = &GridBlock{}
					s.Blocks[slot>>BlockBits] = b
				}
				moveCell(b, int(slot)&(BlockLen-1), from, 0)
				if rng.IntN(10) == 0 {
					s.Attempts = append(s.Attempts, SlotAttempts{Slot: slot, Attempts: []Attempt{{Round: 7, Class: probe.ClassOK}}})
				}
			}
		}
	}
	slices.SortFunc(s.Attempts, func(a, b SlotAttempts) int { return cmp.Compare(a.Slot, b.Slot) })
	return s
}

// sameCells fails unless got's grid holds want's cells, slot for slot.
func sameCells(t *testing.T, got, want *SnapshotSweep) {
	t.Helper()
	if len(got.Blocks) != len(want.Blocks) {
		t.Fatalf("%d blocks, want %d", len(got.Blocks), len(want.Blocks))
	}
	for bi := range want.Blocks {
		g, w := got.Blocks[bi], want.Blocks[bi]
		for j := range BlockLen {
			if w == nil || w.Class[j] == 0 {
				if g != nil && g.Class[j] != 0 {
					t.Fatalf("slot %d: a cell where there was none", bi*BlockLen+j)
				}
				continue
			}
			if g == nil || g.Class[j] != w.Class[j] || g.Round[j] != w.Round[j] || cellFigures(g, j) != cellFigures(w, j) {
				t.Fatalf("slot %d differs", bi*BlockLen+j)
			}
		}
	}
}

type figures struct {
	samples uint32
	lat     LatQ
	bw      BWQ
	err     uint16
}

func cellFigures(b *GridBlock, j int) figures {
	var f figures
	if b.Class[j]&FlagLat != 0 {
		f.samples, f.lat = b.SamplesAt(j), b.Lat[j]
	}
	if b.Class[j]&FlagBW != 0 {
		f.bw = b.BW[j]
	}
	if b.Err != nil {
		f.err = b.Err[j]
	}
	return f
}
