package wire

import (
	"bytes"
	"compress/flate"
	"reflect"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/counters"
)

func testTrailer() SnapshotTrailer {
	return SnapshotTrailer{
		Live: &LivePlan{ID: 7, Window: 10 * time.Second, Members: []LiveMember{{Name: "a", Rails: []int{0}}}},
		Counters: []SweepCounters{{SweepID: "s1", Rounds: []int{2, 5},
			Ports: []SweepPortCounts{{PortCounts: PortCounts{Node: "b", Rail: 1, Counts: []counters.Count{{Index: 4, N: 900}, {Index: 6, N: 120}}}, FromRound: 2}}}},
	}
}

func readAll(t *testing.T, b []byte) ([]string, SnapshotTrailer) {
	t.Helper()
	var ids []string
	tr, err := ReadSnapshotWith(bytes.NewReader(b), func(s *SnapshotSweep) error {
		ids = append(ids, s.Info.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids, tr
}

func TestSnapshotTrailerRoundTrips(t *testing.T) {
	for _, want := range []SnapshotTrailer{{}, testTrailer(), {Live: testTrailer().Live}, {Counters: testTrailer().Counters}} {
		var b bytes.Buffer
		if err := WriteSnapshotWith(&b, testSnapshot(), want); err != nil {
			t.Fatal(err)
		}
		ids, got := readAll(t, b.Bytes())
		if !reflect.DeepEqual(ids, []string{"s1", "s2"}) || !reflect.DeepEqual(got, want) {
			t.Fatalf("trailer does not round-trip: sweeps %v\n got %+v\nwant %+v", ids, got, want)
		}
	}
}

// writeV1 is the layout version 1 wrote: the sweeps, then the live plan
// only when there was one.
func writeV1(t *testing.T, sweeps []SnapshotSweep, live *LivePlan) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteByte(snapshotV1)
	zw, _ := flate.NewWriter(&b, flate.BestSpeed)
	out := &streamWriter{w: zw}
	out.uv(uint64(len(sweeps)))
	for i := range sweeps {
		old := railMajor(sweeps[i])
		head := snapshotHeadV1.Append(nil, &old)
		out.uv(uint64(len(head)))
		out.write(head)
		for bi, blk := range old.Blocks {
			if blk != nil {
				out.uv(uint64(bi) + 1)
				out.block(blk, nil, nil)
			}
		}
		out.uv(0)
	}
	if live != nil {
		body := LivePlanMsg.Append(nil, live)
		out.uv(uint64(len(body)))
		out.write(body)
	}
	if out.err != nil || zw.Close() != nil {
		t.Fatal("writing a version 1 snapshot")
	}
	return b.Bytes()
}

// An upgraded coordinator restores the snapshot its older self wrote.
func TestSnapshotReadsVersion1(t *testing.T) {
	for _, live := range []*LivePlan{nil, testTrailer().Live} {
		b := writeV1(t, testSnapshot(), live)
		ids, got := readAll(t, b)
		if !reflect.DeepEqual(ids, []string{"s1", "s2"}) || !reflect.DeepEqual(got, SnapshotTrailer{Live: live}) {
			t.Fatalf("version 1: sweeps %v, trailer %+v, want live %+v", ids, got, live)
		}
		if sweeps := readSweeps(t, b); !reflect.DeepEqual(sweeps, testSnapshot()) {
			t.Fatalf("version 1's grid read back:\n got %+v\nwant %+v", sweeps, testSnapshot())
		}
	}
}

func TestTaskResultCarriesCounts(t *testing.T) {
	res := TaskResult{SweepID: "s", Round: 3, Src: "a", Dst: "b", Rails: []RailResult{
		{Rail: 0, Class: "ok", Counts: []counters.Count{{Index: 2, N: 17}}}, {Rail: 1, Class: "ok"}}}
	scratch := make([]RailResult, 0, 4)
	scratch = append(scratch, RailResult{Counts: []counters.Count{{Index: 9, N: 1}}}, RailResult{Counts: []counters.Count{{Index: 9, N: 1}}})
	got, err := DecodeAnswer(TaskResultMsg.Append(nil, &res), AnswerRoom{Task: &Task{SweepID: "s", Round: 3, Src: "a", Dst: "b"}, Rails: scratch[:0]})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Rails[0].Counts, res.Rails[0].Counts) || got.Rails[1].Counts != nil {
		t.Fatalf("counts: got %+v and %+v, want %+v and none (the scratch's old counts must not survive)",
			got.Rails[0].Counts, got.Rails[1].Counts, res.Rails[0].Counts)
	}
}
