package wire

import (
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// pairAnswer is an 8-rail pair's answer, both halves, as a worker sends it
// on a stream opened for codes.
func pairAnswer() (*Task, []byte) {
	rails := make([]RailResult, 8)
	for i := range rails {
		rails[i] = RailResult{Rail: i, SrcDevice: "mlx5_" + string(rune('0'+i)), DstDevice: "mlx5_" + string(rune('0'+i)),
			Class: probe.ClassOK, SrcGID: 3, DstGID: 3, Latency: &probe.Latency{Samples: 1000, MinNs: 990.5 + float64(i),
				P50Ns: 1010.25, P90Ns: 1030.1, P99Ns: 1100.7, P999Ns: 1300.2, MaxNs: 2000.9, StdevNs: 12.3}}
	}
	res := TaskResult{SweepID: "sweep-1", Round: 17, Src: "node-0001", Dst: "node-0002", Rails: rails,
		Reverse: &ReverseResult{Rails: rails}}
	return &Task{SweepID: res.SweepID, Round: res.Round, Src: res.Src, Dst: res.Dst}, TaskResultQ.Append(nil, &res)
}

// BenchmarkDecodeAnswer is the leader's decode of one pair's answer into
// reused room, as a dispatching goroutine does a million times a
// 1,024-node sweep.
func BenchmarkDecodeAnswer(b *testing.B) {
	task, msg := pairAnswer()
	room := AnswerRoom{Task: task, Rails: make([]RailResult, 16), Lats: make([]probe.Latency, 16), Codes: make([][7]uint16, 16),
		Reverse: new(ReverseResult)}
	b.ReportAllocs()
	for b.Loop() {
		res, err := DecodeAnswer(msg, room)
		if err != nil || len(res.Rails) != 8 {
			b.Fatal(err, len(res.Rails))
		}
	}
}
