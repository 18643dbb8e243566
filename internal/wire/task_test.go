package wire

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// DecodeAnswer gives what Decode gives but the rails' device names,
// whether its scratch is too small, large enough, or still holds the
// previous message's rails, and with or without a room for the reverse
// half that still holds an earlier one; an answer naming another sweep,
// round or pair than its task's is refused.
func TestDecodeAnswerMatchesDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	scratch := make([]RailResult, 0, 4)
	var rev *ReverseResult // a room for the reverse half every other message
	for i := range 200 {
		if i%2 == 0 {
			rev = &ReverseResult{Elapsed: 99, Rails: make([]RailResult, 3)} // what a previous answer left
		} else {
			rev = nil
		}
		var v TaskResult
		fill(reflect.ValueOf(&v).Elem(), rng, i%2 == 0)
		b := TaskResultMsg.Append(nil, &v)
		want, err := TaskResultMsg.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		// It leaves the device names out, and only them.
		asTheLeaderReads(&want)
		task := &Task{SweepID: v.SweepID, Round: v.Round, Src: v.Src, Dst: v.Dst}
		got, err := DecodeAnswer(b, AnswerRoom{Task: task, Rails: scratch, Lats: make([]probe.Latency, i%5), Reverse: rev})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("message %d:\n got %+v\nwant %+v", i, got, want)
		}
		if i%3 == 0 {
			scratch = make([]RailResult, 0, 64)
		}
		for k, other := range []Task{{SweepID: v.SweepID + "x", Round: v.Round, Src: v.Src, Dst: v.Dst},
			{SweepID: v.SweepID, Round: v.Round + 1, Src: v.Src, Dst: v.Dst},
			{SweepID: v.SweepID, Round: v.Round, Src: v.Dst + "x", Dst: v.Dst},
			{SweepID: v.SweepID, Round: v.Round, Src: v.Src, Dst: v.Src + "x"}} {
			if _, err := DecodeAnswer(b, AnswerRoom{Task: &other}); !errors.Is(err, ErrOtherTask) {
				t.Fatalf("message %d, task %d (%+v): %v, want ErrOtherTask", i, k, other, err)
			}
		}
	}
	if _, err := DecodeAnswer([]byte{TaskResultMsg.Version() + 1}, AnswerRoom{Task: &Task{}}); err == nil {
		t.Fatal("another version decoded")
	}
}

// A TaskDecoder gives what Decode gives on random tasks, one decoder
// throughout: its rails' room still holds the previous task's.
func TestTaskDecoderMatchesDecodeOnRandomTasks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var d TaskDecoder
	for i := range 200 {
		var v Task
		fill(reflect.ValueOf(&v).Elem(), rng, i%2 == 0)
		b := TaskMsg.Append(nil, &v)
		want, err := TaskMsg.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("message %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
}

// asTheLeaderReads is res as DecodeAnswer gives it: without the rails'
// device names, which the leader knows from its task.
func asTheLeaderReads(res *TaskResult) {
	for _, rails := range [][]RailResult{res.Rails, reverseRails(res.Reverse)} {
		for k := range rails {
			rails[k].SrcDevice, rails[k].DstDevice = "", ""
		}
	}
}

func reverseRails(r *ReverseResult) []RailResult {
	if r == nil {
		return nil
	}
	return r.Rails
}

// A reverse half that mirrors the forward one travels as a flag and
// decodes to the same rails; one that differs in any rail travels whole.
func TestTaskMirroredReverse(t *testing.T) {
	ep := func(dev string, gid int) probe.Endpoint {
		return probe.Endpoint{Device: dev, Port: 1, GIDIndex: gid, Rail: 0}
	}
	fwd := []probe.RailPair{{Rail: 0, Src: ep("mlx5_0", 3), Dst: ep("mlx5_4", 3)}, {Rail: 1, Src: ep("mlx5_1", 3), Dst: ep("mlx5_5", -1)}}
	mirror := []probe.RailPair{mirrored(fwd[0]), mirrored(fwd[1])}
	skewed := []probe.RailPair{mirrored(fwd[0]), mirrored(fwd[1])}
	skewed[1].Dst.GIDIndex = 1
	size := map[string]int{}
	for name, back := range map[string][]probe.RailPair{"mirror": mirror, "skewed": skewed, "empty": {}, "short": mirror[:1]} {
		task := Task{SweepID: "s", Src: "a", Dst: "b", Rails: fwd, Reverse: &ReverseTask{Rails: back, Ticket: "t"}}
		b := TaskMsg.Append(nil, &task)
		size[name] = len(b)
		var d TaskDecoder
		for _, decode := range []func([]byte) (Task, error){TaskMsg.Decode, d.Decode, d.Decode} {
			got, err := decode(b)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !reflect.DeepEqual(got, task) {
				t.Fatalf("%s:\n got %+v\nwant %+v", name, got, task)
			}
		}
	}
	if size["mirror"] >= size["skewed"]-20 {
		t.Errorf("a mirrored reverse took %d bytes, a skewed one %d: the mirror was sent whole", size["mirror"], size["skewed"])
	}
	// A mirror flag over halves of different lengths is corrupt.
	task := Task{SweepID: "s", Rails: fwd, Reverse: &ReverseTask{Rails: mirror}}
	b := TaskMsg.Append(nil, &task)
	if _, err := TaskMsg.Decode(corruptMirror(t, b)); err == nil {
		t.Error("a mirrored task whose reverse count differs from the forward one decoded")
	}
}

// corruptMirror changes the reverse count of a mirrored task from 2 to 1.
func corruptMirror(t *testing.T, b []byte) []byte {
	t.Helper()
	for i := 1; i+1 < len(b); i++ {
		// the mirror flag (1) then the reverse count (2 rails: 3)
		if b[i] == 1 && b[i+1] == 3 && b[i+2] == 3 {
			out := append([]byte(nil), b...)
			out[i+1] = 2
			return out
		}
	}
	t.Fatal("no mirror flag and counts found")
	return nil
}
