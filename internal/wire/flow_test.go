package wire

import (
	"bytes"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"

	"github.com/klauspost/compress/flate"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// A rail's flow reaches the leader in every form an answer takes: both
// codecs, both halves, and the leader's own decoder, plain rails (its
// one-pass read) and others alike.
func TestTaskResultCarriesFlow(t *testing.T) {
	lat := &probe.Latency{Samples: 1000, P50Ns: 1000}
	res := TaskResult{SweepID: "s", Round: 2, Src: "a", Dst: "b",
		Rails: []RailResult{{Rail: 0, Class: probe.ClassOK, Latency: lat, Flow: 0xc001},
			{Rail: 1, Class: probe.ClassTimeout, Error: &probe.Error{Class: probe.ClassTimeout}, Flow: 0xfffe}},
		Reverse: &ReverseResult{Rails: []RailResult{{Rail: 0, Class: probe.ClassOK, Latency: lat, Flow: 0xd00d}, {Rail: 1, Class: probe.ClassOK}}}}
	want := []uint16{0xc001, 0xfffe, 0xd00d, 0}
	task := &Task{SweepID: "s", Round: 2, Src: "a", Dst: "b"}
	for _, c := range []*Codec[TaskResult]{TaskResultMsg, TaskResultQ} {
		b := c.Append(nil, &res)
		dec, err := c.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		lead, err := DecodeAnswer(b, AnswerRoom{Task: task})
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range []TaskResult{dec, lead} {
			if f := flows(got); !reflect.DeepEqual(f, want) {
				t.Fatalf("version %d: flows %#x, want %#x", c.Version(), f, want)
			}
		}
	}
}

func flows(res TaskResult) []uint16 {
	var out []uint16
	for _, rr := range append(res.Rails, res.Reverse.Rails...) {
		out = append(out, rr.Flow)
	}
	return out
}

// A rail's back flow reaches the leader as its flow does, set apart from
// it: a rail may know either without the other.
func TestTaskResultCarriesBackFlow(t *testing.T) {
	lat := &probe.Latency{Samples: 1000, P50Ns: 1000}
	res := TaskResult{SweepID: "s", Round: 2, Src: "a", Dst: "b",
		Rails: []RailResult{{Rail: 0, Class: probe.ClassOK, Latency: lat, Flow: 0xc001, BackFlow: 0xc101},
			{Rail: 1, Class: probe.ClassTimeout, Error: &probe.Error{Class: probe.ClassTimeout}, BackFlow: 0xfffe},
			{Rail: 2, Class: probe.ClassOK, Latency: lat, BackFlow: 0x80}},
		Reverse: &ReverseResult{Rails: []RailResult{{Rail: 0, Class: probe.ClassOK, Latency: lat, Flow: 0xd00d},
			{Rail: 1, Class: probe.ClassOK, Latency: lat, Flow: 0x7f, BackFlow: 0xd11d}}}}
	want := []uint16{0xc101, 0xfffe, 0x80, 0, 0xd11d}
	wantFlows := []uint16{0xc001, 0, 0, 0xd00d, 0x7f}
	task := &Task{SweepID: "s", Round: 2, Src: "a", Dst: "b"}
	for _, c := range []*Codec[TaskResult]{TaskResultMsg, TaskResultQ} {
		b := c.Append(nil, &res)
		dec, err := c.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		lead, err := DecodeAnswer(b, AnswerRoom{Task: task})
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range []TaskResult{dec, lead} {
			if f := backFlows(got); !reflect.DeepEqual(f, want) {
				t.Fatalf("version %d: back flows %#x, want %#x", c.Version(), f, want)
			}
			if f := flows(got); !reflect.DeepEqual(f, wantFlows) {
				t.Fatalf("version %d: flows %#x, want %#x", c.Version(), f, wantFlows)
			}
		}
	}
}

func backFlows(res TaskResult) []uint16 {
	var out []uint16
	for _, rr := range append(res.Rails, res.Reverse.Rails...) {
		out = append(out, rr.BackFlow)
	}
	return out
}

// A grid cell's flow sits in padding: GridCodes stays the 56 bytes a
// leader writes and reads once a cell.
func TestGridCodesSize(t *testing.T) {
	if n := unsafe.Sizeof(GridCodes{}); n != 56 {
		t.Fatalf("GridCodes is %d bytes, want 56", n)
	}
}

// roundV1Of is round entry b as version 1 wrote it: no flow columns,
// whole cells without their flows.
func roundV1Of(t *testing.T, b []byte) []byte {
	t.Helper()
	raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(b[1:])))
	if err != nil {
		t.Fatal(err)
	}
	r := reader{b: raw}
	r.str()
	r.u64()
	r.u64()
	r.strs()
	getList(&r, (*reader).errorFields)
	w := writer(bytes.Clone(raw[:len(raw)-len(r.b)]))
	for i := range nCols {
		n := r.u64()
		if i < colFlow {
			w.u64(n)
			w = append(w, r.b[:n]...)
		}
		r.b = r.b[n:]
	}
	putList(&w, getList(&r, (*reader).cell), func(w *writer, c *Cell) { w.cellOf(c, false) })
	if err := r.done(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	out.WriteByte(roundV1)
	zw, _ := flate.NewWriter(&out, flate.BestSpeed)
	if _, err := zw.Write(w); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// A coordinator upgraded in place replays the round entries its older
// self logged: version 1 reads as it was, with no flows.
func TestRoundReadsVersion1(t *testing.T) {
	grid, whole := testRound(rand.New(rand.NewPCG(7, 8)), 5)
	b := encodeRound(t, grid, whole)
	cur, err := ReadRound(b)
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Release()
	old, err := ReadRound(roundV1Of(t, b))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Release()
	wantWhole := cloneCells(whole)
	for i := range wantWhole {
		wantWhole[i].Flow, wantWhole[i].BackFlow = 0, 0
	}
	if !reflect.DeepEqual(old.Whole, wantWhole) || old.Cells != cur.Cells {
		t.Fatalf("version 1: %d cells, whole %+v; want %d, %+v", old.Cells, old.Whole, cur.Cells, wantWhole)
	}
	var c, want GridCodes
	c.Flow, c.BackFlow = 7, 7 // a reused GridCodes must not keep a flow
	flowed, backed := 0, 0
	for i := range cur.Cells {
		if err := cur.Next(&want); err != nil {
			t.Fatal(err)
		}
		if err := old.Next(&c); err != nil {
			t.Fatal(err)
		}
		if want.Flow != 0 {
			flowed++
		}
		if want.BackFlow != 0 {
			backed++
		}
		want.Flow, want.BackFlow = 0, 0
		if c != want {
			t.Fatalf("cell %d: %+v, want %+v", i, c, want)
		}
	}
	if flowed == 0 || backed == 0 {
		t.Fatalf("the test round has %d flows and %d back flows to leave out", flowed, backed)
	}
}

// withFlows is s with flows and back flows on some of its grid's cells
// and on its whole cells.
func withFlows(s []SnapshotSweep) []SnapshotSweep {
	f := new(FlowBlock)
	for j := range f {
		if s[0].Blocks[0].Class[j] != 0 && j%3 != 0 {
			f[j] = 0xc000 | uint16(j)
		}
	}
	s[0].Flows = []*FlowBlock{f}
	s[0].Whole[0].Flow = 0xbeef
	return withBackFlows(s)
}

// withBackFlows is s with back flows on some of its grid's cells, others
// than withFlows gives flows, and on its whole cells.
func withBackFlows(s []SnapshotSweep) []SnapshotSweep {
	f := new(FlowBlock)
	for j := range f {
		if s[0].Blocks[0].Class[j] != 0 && j%3 != 1 {
			f[j] = 0xd000 | uint16(j)
		}
	}
	s[0].BackFlows = []*FlowBlock{f}
	s[0].Whole[0].BackFlow = 0xfeed
	return s
}

func TestSnapshotCarriesFlows(t *testing.T) {
	want := withFlows(testSnapshot())
	var b bytes.Buffer
	if err := WriteSnapshot(&b, want); err != nil {
		t.Fatal(err)
	}
	if got := readSweeps(t, b.Bytes()); !reflect.DeepEqual(got, want) {
		t.Fatalf("flows do not round-trip:\n got %+v\nwant %+v", got, want)
	}
	// A sweep without flows writes none and reads back without.
	b.Reset()
	if err := WriteSnapshot(&b, testSnapshot()); err != nil {
		t.Fatal(err)
	}
	if got := readSweeps(t, b.Bytes()); got[0].Flows != nil || got[0].BackFlows != nil {
		t.Fatalf("flows %v, back flows %v from a sweep that had none", got[0].Flows, got[0].BackFlows)
	}
}

// Back flows are kept apart from flows: a sweep that has only back flows
// writes and reads back only those.
func TestSnapshotCarriesBackFlowsAlone(t *testing.T) {
	want := withBackFlows(testSnapshot())
	var b bytes.Buffer
	if err := WriteSnapshot(&b, want); err != nil {
		t.Fatal(err)
	}
	got := readSweeps(t, b.Bytes())
	if got[0].Flows != nil {
		t.Fatalf("flows %v from a sweep that had back flows only", got[0].Flows)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("back flows do not round-trip:\n got %+v\nwant %+v", got, want)
	}
}

// Version 3, the last before flows, reads as it was: no flows.
func TestSnapshotReadsVersion3(t *testing.T) {
	var b bytes.Buffer
	if err := writeSnapshot(&b, withFlows(testSnapshot()), testTrailer(), snapshotV3); err != nil {
		t.Fatal(err)
	}
	ids, tr := readAll(t, b.Bytes())
	if !reflect.DeepEqual(ids, []string{"s1", "s2"}) || !reflect.DeepEqual(tr, testTrailer()) {
		t.Fatalf("version 3: sweeps %v, trailer %+v", ids, tr)
	}
	if got := readSweeps(t, b.Bytes()); !reflect.DeepEqual(got, testSnapshot()) {
		t.Fatalf("version 3 read back:\n got %+v\nwant %+v", got, testSnapshot())
	}
}
