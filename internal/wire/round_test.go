package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// testRound is a round of grid cells over n nodes and 2 rails, with a few
// failures and bandwidth figures, and two cells kept whole.
func testRound(rng *rand.Rand, n int) ([]GridCell, []Cell) {
	var grid []GridCell
	down := &probe.Error{Class: probe.ClassPortDown, Verb: "ibv_modify_qp(RTR)", Errno: 19, Cause: "port down", Fix: "replug"}
	for s := range n {
		for d := range n {
			for rail := range 2 {
				if s == d {
					continue
				}
				c := GridCell{Src: s, Dst: d, Rail: rail, Round: 4 + rng.IntN(2), Class: probe.ClassOK, Flow: testFlow(rng),
					BackFlow: testFlow(rng)}
				if rng.IntN(9) == 0 {
					c.Class, c.Error = down.Class, down
				} else {
					p50 := 1000 + 100*rng.Float64()
					c.Latency = &probe.Latency{Samples: 1000, MinNs: p50 * 0.97, P50Ns: p50, P90Ns: p50 * 1.05, P99Ns: p50 * 1.2,
						P999Ns: p50 * 1.5, MaxNs: p50 * 3, StdevNs: 30}
					if rng.IntN(3) == 0 {
						c.Bandwidth = &probe.Bandwidth{Gbps: 390 + rng.Float64(), MsgRate: 7e5, Bytes: 1 << 24, Duration: 0.0123}
					}
				}
				grid = append(grid, c)
			}
		}
	}
	one := 1
	whole := []Cell{{Src: "a", Dst: "b", Rail: 0, DstRail: &one, Class: probe.ClassOK, Latency: &probe.Latency{P50Ns: 1.5}, Flow: 0xc0de,
		BackFlow: 0xbac0},
		{Src: "x", Dst: "y", Rail: 3, Class: probe.ClassTimeout, Error: &probe.Error{Class: probe.ClassTimeout, Cause: "slow"},
			Retests: []Attempt{{Round: 9, Class: probe.ClassOK}}}}
	return grid, whole
}

// testFlow is a flow as RoCE v2 QPs have them (0xC000 up), or none, or
// one whose varint is one or two bytes.
func testFlow(rng *rand.Rand) uint16 {
	return [...]uint16{0, 0x7f, 0x80, 0xc000 | uint16(rng.IntN(0x4000))}[rng.IntN(4)]
}

func encodeRound(tb testing.TB, grid []GridCell, whole []Cell) []byte {
	tb.Helper()
	enc := NewRoundEncoder("s1", 4)
	for i := range grid {
		if !enc.Grid(&grid[i]) {
			tb.Fatalf("cell %d refused", i)
		}
	}
	for i := range whole {
		enc.Whole(&whole[i])
	}
	b, err := enc.Finish(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestRoundRoundTrip(t *testing.T) {
	grid, whole := testRound(rand.New(rand.NewPCG(1, 2)), 7)
	b := encodeRound(t, grid, whole)
	rr, err := ReadRound(b)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	if rr.SweepID != "s1" || rr.Round != 4 || rr.Cells != len(grid) || !reflect.DeepEqual(rr.Whole, whole) {
		t.Fatalf("header %q %d %d, whole %+v", rr.SweepID, rr.Round, rr.Cells, rr.Whole)
	}
	var c GridCodes
	for i, want := range grid {
		if err := rr.Next(&c); err != nil {
			t.Fatalf("cell %d: %v", i, err)
		}
		got := GridCell{Src: int(c.Src), Dst: int(c.Dst), Rail: int(c.Rail), Round: int(c.Round), Class: rr.Classes[c.Meta&ClassMask],
			Flow: c.Flow, BackFlow: c.BackFlow}
		if c.Err > 0 {
			got.Error = &rr.Errors[c.Err-1]
		}
		if c.Meta&FlagLat != 0 {
			got.Latency = new(c.Lat.Latency(c.Samples))
		}
		if c.Meta&FlagBW != 0 {
			got.Bandwidth = new(c.BW.Bandwidth())
		}
		want.Latency, want.Bandwidth = quantLatency(want.Latency), quantBandwidth(want.Bandwidth)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("cell %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
	// About 6 bytes a grid cell: a round of a 1,024-node sweep stays
	// under 100 KB of log.
	if per := float64(len(b)) / float64(len(grid)); per > 12 {
		t.Errorf("%.1f bytes a cell", per)
	}
}

func quantLatency(l *probe.Latency) *probe.Latency {
	if l == nil {
		return nil
	}
	return new(LatCodes(l).Latency(uint32(l.Samples)))
}

func quantBandwidth(b *probe.Bandwidth) *probe.Bandwidth {
	if b == nil {
		return nil
	}
	return new(BWCodes(b).Bandwidth())
}

// A round entry with more classes than a class byte holds keeps the rest
// of its cells whole.
func TestRoundClassTableFull(t *testing.T) {
	enc := NewRoundEncoder("s", 0)
	for i := range MaxClasses + 1 {
		ok := enc.Grid(&GridCell{Src: 0, Dst: 1, Class: probe.Class(string(rune('A' + i)))})
		if ok != (i < MaxClasses) {
			t.Fatalf("class %d: accepted %v", i, ok)
		}
	}
	if _, err := enc.Finish(nil); err != nil {
		t.Fatal(err)
	}
}

func TestRoundRejects(t *testing.T) {
	grid, whole := testRound(rand.New(rand.NewPCG(3, 4)), 4)
	b := encodeRound(t, grid, whole)
	for name, bad := range map[string][]byte{
		"empty":     nil,
		"version":   append([]byte{RoundVersion + 1}, b[1:]...),
		"truncated": b[:len(b)-3],
		"trailing":  append(bytes.Clone(b), 0),
	} {
		if rr, err := ReadRound(bad); err == nil {
			rr.Release()
			t.Errorf("%s: read without error", name)
		}
	}
}

// FuzzRound: no round entry may panic the reader, whatever its cells.
func FuzzRound(f *testing.F) {
	grid, whole := testRound(rand.New(rand.NewPCG(5, 6)), 3)
	b := encodeRound(f, grid, whole)
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add([]byte{RoundVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		rr, err := ReadRound(b)
		if err != nil {
			return
		}
		defer rr.Release()
		var c GridCodes
		for range min(rr.Cells, 1<<16) {
			if rr.Next(&c) != nil {
				return
			}
		}
	})
}

// testSnapshot is two sweeps: one with a grid (a full block, a sparse one,
// an empty one), tables, attempts and whole cells; one not started.
func testSnapshot() []SnapshotSweep {
	nodes := []Node{{Name: "a", Ports: make([]probe.Port, 2)}, {Name: "b", Ports: make([]probe.Port, 2)}, {Name: "c"}}
	for i := range nodes[0].Ports {
		nodes[0].Ports[i], nodes[1].Ports[i] = probe.Port{Device: "mlx5_0", Rail: i}, probe.Port{Device: "mlx5_1", Rail: i}
	}
	full := &GridBlock{Samples: 1000, Lat: new([BlockLen]LatQ), BW: new([BlockLen]BWQ), Err: new([BlockLen]uint16)}
	var attempt int32
	k := 0
	for src := range 3 { // every slot of 3 nodes on 2 rails, padding aside
		for dst := range 3 {
			for rail := range 2 {
				j := GridSlot(3, 2, src, dst, rail)
				full.Class[j], full.Round[j] = 1|FlagLat, uint16(k)
				full.Lat[j] = LatQ{1, 2, 3, 4, 5, 6, uint16(k)}
				switch k {
				case 4:
					full.Class[j], full.Err[j], full.Lat[j] = 2, 1, LatQ{}
				case 5:
					attempt = j
				case 7:
					full.Class[j] |= FlagBW
					full.BW[j] = BWQ{Bytes: 1 << 20, Q: [3]uint16{9, 8, 7}}
				}
				k++
			}
		}
	}
	healthy := true
	info := api.SweepInfo{ID: "s1", State: api.SweepDone, Nodes: []string{"a", "b", "c"}, Healthy: &healthy}
	return []SnapshotSweep{
		{Info: info, Nodes: nodes, Rounds: []int{0, 1, 3}, Spec: Spec{Params: probe.DefaultTestParams(), Rails: []int{}},
			Retests:  []RetestPlan{{SweepID: "s1", Pass: 1, Rounds: []PlannedRound{{Index: 3, Pairs: []Pair{{"a", "b"}}}}, Pairs: 1}},
			Whole:    []Cell{{Src: "a", Dst: "z", Class: probe.ClassOK}},
			Attempts: []SlotAttempts{{Slot: attempt, Attempts: []Attempt{{Round: 3, Class: probe.ClassOK}}}},
			Classes:  []probe.Class{probe.ClassOK, probe.ClassPortDown}, Errors: []probe.Error{{Class: probe.ClassPortDown, Cause: "down"}},
			Blocks: []*GridBlock{full}},
		{Info: api.SweepInfo{ID: "s2", State: api.SweepRunning}},
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	want := testSnapshot()
	var b bytes.Buffer
	if err := WriteSnapshot(&b, want); err != nil {
		t.Fatal(err)
	}
	var got []SnapshotSweep
	if err := ReadSnapshot(bytes.NewReader(b.Bytes()), func(s *SnapshotSweep) error {
		s.nBlocks = 0
		got = append(got, *s)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("snapshot does not round-trip:\n got %+v\nwant %+v", got, want)
	}
	bad := append([]byte{SnapshotVersion + 1}, b.Bytes()[1:]...)
	if err := ReadSnapshot(bytes.NewReader(bad), func(*SnapshotSweep) error { return nil }); err == nil {
		t.Fatal("another snapshot version read without error")
	}
}

// FuzzSnapshot: no snapshot may panic the reader.
func FuzzSnapshot(f *testing.F) {
	var b bytes.Buffer
	if err := WriteSnapshot(&b, testSnapshot()); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add(b.Bytes()[:b.Len()/2])
	f.Add([]byte{SnapshotVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = ReadSnapshot(bytes.NewReader(b), func(*SnapshotSweep) error { return nil })
	})
}

func TestCheckGrid(t *testing.T) {
	// 46,338 x 46,344 slots on one rail (rows padded to a multiple of 8):
	// past an int32 slot; 46,337 x 46,344 is not.
	nodes := make([]Node, 46338)
	nodes[0].Ports = make([]probe.Port, 1)
	if err := CheckGrid(nodes); err == nil || !strings.Contains(err.Error(), "select fewer nodes") {
		t.Fatalf("CheckGrid: %v", err)
	}
	if err := CheckGrid(nodes[:46337]); err != nil {
		t.Fatal(err)
	}
	// 16,384 nodes on 8 rails fill the slots exactly: the last is MaxInt32.
	big := make([]Node, 16384)
	big[0].Ports = make([]probe.Port, 8)
	if err := CheckGrid(big); err != nil {
		t.Fatalf("16,384 x 8: %v", err)
	}
	if last := GridSlot(16384, 8, 16383, 16383, 7); last != math.MaxInt32 {
		t.Fatalf("16,384 x 8: last slot %d", last)
	}
	b := StartRecord.Append(nil, &SweepStart{Nodes: nodes})
	if _, err := StartRecord.Decode(b); err == nil {
		t.Fatal("a start record past the grid decoded")
	}
}

// A grid cell's fields are checked against their widths before they are
// narrowed: an entry whose index, rail, round or sample count is past it
// is corrupt, never wrapped into a valid cell; and the encoder sends such
// a cell whole.
func TestRoundFieldsPastTheirWidths(t *testing.T) {
	lat := &probe.Latency{Samples: 1000, P50Ns: 1000}
	for _, c := range []struct {
		name string
		col  int
		v    []byte
	}{
		{"source index past 32 bits", colSrc, binary.AppendUvarint(nil, 1<<32+1)},
		{"destination index wrapping to -1", colDst, binary.AppendUvarint(nil, math.MaxUint64)},
		{"rail past 16 bits", colRail, binary.AppendUvarint(nil, 1<<16)},
		{"round below 0", colRound, binary.AppendVarint(nil, -8)},
		{"round past 16 bits", colRound, binary.AppendVarint(nil, 1<<16)},
		{"samples past 32 bits", colSamples, binary.AppendUvarint(nil, 1<<32)},
	} {
		e := NewRoundEncoder("s1", 7)
		if !e.Grid(&GridCell{Src: 1, Dst: 2, Rail: 3, Round: 7, Class: probe.ClassOK, Latency: lat}) {
			t.Fatal("a plain cell was refused")
		}
		e.cols[c.col] = c.v
		b, err := e.Finish(nil)
		if err != nil {
			t.Fatal(err)
		}
		rr, err := ReadRound(b)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var g GridCodes
		if err := rr.Next(&g); !errors.Is(err, ErrCorruptRound) {
			t.Errorf("%s: read as %+v (%v)", c.name, g, err)
		}
		rr.Release()
	}
	e := NewRoundEncoder("s1", 7)
	defer func() {
		if _, err := e.Finish(nil); err != nil {
			t.Error(err)
		}
	}()
	for _, c := range []GridCell{{Src: 1 << 32, Dst: 2}, {Src: 1, Dst: 1 << 32}, {Src: 1, Dst: 2, Rail: 1 << 16}, {Src: 1, Dst: 2, Round: 1 << 16},
		{Src: 1, Dst: 2, Latency: &probe.Latency{Samples: 1 << 32}}} {
		c.Class = probe.ClassOK
		if e.Grid(&c) {
			t.Errorf("%+v went in grid form", c)
		}
	}
}

// TestVarintShortcutsAsBinary: the encoder's one- and two-byte shortcuts
// write what encoding/binary writes: every value up to three bytes, and
// both sides of the larger boundaries.
func TestVarintShortcutsAsBinary(t *testing.T) {
	values := []uint64{1<<21 - 1, 1 << 21, math.MaxUint32, math.MaxInt64, 1 << 63, math.MaxUint64} // int64: MaxInt64, MinInt64, -1
	for u := range uint64(1 << 16) {
		values = append(values, u)
	}
	for _, u := range values {
		if got, want := appendUv([]byte{9}, u), binary.AppendUvarint([]byte{9}, u); !bytes.Equal(got, want) {
			t.Errorf("appendUv(%#x) = %x, want %x", u, got, want)
		}
	}
	for _, u := range values {
		v := int64(u)
		if u < 1<<16 {
			v = int64(u) - 1<<15 // both signs around zero
		}
		if got, want := appendZig([]byte{9}, v), binary.AppendVarint([]byte{9}, v); !bytes.Equal(got, want) {
			t.Errorf("appendZig(%d) = %x, want %x", v, got, want)
		}
	}
}
