package wire

import (
	"context"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/counters"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// asSent makes v what a decoder gives back of it: a TaskResultMsg keeps
// the figures and never carries codes; a TaskResultQ carries each figure
// as its code (a latency's own codes when it has them) and decodes them.
func asSent(v *TaskResult, codes bool) {
	for _, rails := range [][]RailResult{v.Rails, reverseRails(v.Reverse)} {
		for k := range rails {
			rr := &rails[k]
			if !codes {
				rr.LatencyQ = nil
				continue
			}
			if rr.Latency == nil {
				rr.LatencyQ = nil
			} else {
				q := LatCodes(rr.Latency)
				if rr.LatencyQ != nil {
					q = *rr.LatencyQ
				}
				rr.Latency, rr.LatencyQ = new(decodedLat(rr.Latency.Samples, q)), &q
			}
			if l := rr.ReadLatency; l != nil {
				rr.ReadLatency = new(decodedLat(l.Samples, LatCodes(l)))
			}
			if b := rr.Bandwidth; b != nil {
				rr.Bandwidth = new(BWCodes(b).Bandwidth())
			}
		}
	}
}

func decodedLat(samples int, q LatQ) probe.Latency { return q.figures(samples, UnquantTable()) }

// A code's figure quantises back to that code, but for the log-scale codes
// whose figure is a whole number the exact codes also hold: those give
// the exact code, which decodes to the same figure. So a figure passed on
// from a TaskResultQ answer (a worker's reverse half, a leader's cell kept
// whole) keeps its value.
func TestCodesSurviveTheirFigures(t *testing.T) {
	aliases := 0
	for c := range math.MaxUint16 + 1 {
		v := Unquant(uint16(c))
		got := Quant(v)
		if got == uint16(c) {
			continue
		}
		if Unquant(got) != v || got >= qExact {
			t.Fatalf("code %d: figure %g quantises to %d (%g)", c, v, got, Unquant(got))
		}
		aliases++
	}
	if aliases == 0 || aliases > 16 {
		t.Fatalf("%d log-scale codes decode to a whole number below %d; expected a few (powers of two)", aliases, qExact)
	}
}

// A TaskResultQ answer decodes, through DecodeAnswer, to the figures a
// TaskResultMsg answer's figures would be stored as, with their codes;
// an answer of either version is read.
func TestDecodeAnswerReadsCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for i := range 200 {
		var v TaskResult
		fill(reflect.ValueOf(&v).Elem(), rng, i%2 == 0)
		asSent(&v, false) // a worker has no codes of its own
		task := &Task{SweepID: v.SweepID, Round: v.Round, Src: v.Src, Dst: v.Dst}
		floats, err := DecodeAnswer(TaskResultMsg.Append(nil, &v), AnswerRoom{Task: task})
		if err != nil {
			t.Fatal(err)
		}
		codes, err := DecodeAnswer(TaskResultQ.Append(nil, &v), AnswerRoom{Task: task, Codes: make([][7]uint16, i%5)})
		if err != nil {
			t.Fatal(err)
		}
		want := floats
		asSent(&want, true)
		if !reflect.DeepEqual(codes, want) {
			t.Fatalf("message %d:\n got %+v\nwant %+v", i, codes, want)
		}
		for _, rails := range [][]RailResult{codes.Rails, reverseRails(codes.Reverse)} {
			for _, rr := range rails {
				if rr.Latency != nil && *rr.LatencyQ != LatCodes(rr.Latency) {
					t.Fatalf("message %d rail %d: codes %v, figures %+v", i, rr.Rail, *rr.LatencyQ, *rr.Latency)
				}
			}
		}
	}
}

// An answer in codes is about half the bytes of one in floats.
func TestCodesHalveAnAnswer(t *testing.T) {
	rails := make([]RailResult, 8)
	for i := range rails {
		rails[i] = RailResult{Rail: i, Class: probe.ClassOK, Latency: &probe.Latency{Samples: 1000, MinNs: 990.5, P50Ns: 1010.25,
			P90Ns: 1030.1, P99Ns: 1100.7, P999Ns: 1300.2, MaxNs: 2000.9, StdevNs: 12.3}}
	}
	res := TaskResult{SweepID: "sweep-1", Round: 17, Src: "node-0001", Dst: "node-0002", Rails: rails,
		Reverse: &ReverseResult{Rails: rails}}
	floats, codes := len(TaskResultMsg.Append(nil, &res)), len(TaskResultQ.Append(nil, &res))
	t.Logf("an 8-rail pair's answer: %d bytes in floats, %d in codes", floats, codes)
	if codes*2 > floats {
		t.Fatalf("%d bytes in codes against %d in floats", codes, floats)
	}
}

// A stream opened as either version is served, its answers in that
// version's result; asked for a list, the newest it knows; the refusal
// of any other names both.
func TestStreamServerVersions(t *testing.T) {
	var s StreamServer
	defer s.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Serve(w, r, func(_ context.Context, task, out []byte, codes bool) ([]byte, byte) {
			return append(out, ResultCodec(codes).Version()), FrameResult
		})
	}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	for proto, want := range map[string]byte{StreamProto: TaskResultQ.Version(), StreamProtoFloats: TaskResultMsg.Version(), "rdmamesh-tasks/9": 0,
		"rdmamesh-tasks/1, " + StreamProto: TaskResultQ.Version(), "rdmamesh-tasks/9, " + StreamProtoFloats: TaskResultMsg.Version()} {
		req, err := http.NewRequest(http.MethodPost, srv.URL+StreamPath, http.NoBody)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", proto)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if want == 0 {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Upgrade") != "" ||
				!strings.Contains(string(body), StreamProto) || !strings.Contains(string(body), StreamProtoFloats) {
				t.Fatalf("%s: %s %s", proto, resp.Status, body)
			}
			continue
		}
		chosen := StreamProtoFloats
		if want == TaskResultQ.Version() {
			chosen = StreamProto
		}
		if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Upgrade") != chosen {
			t.Fatalf("%s: %s, Upgrade %q", proto, resp.Status, resp.Header.Get("Upgrade"))
		}
		rwc := resp.Body.(io.ReadWriteCloser)
		b := append(BeginFrame(nil), "task"...)
		EndFrame(b, FrameTask, 1)
		if _, err := rwc.Write(b); err != nil {
			t.Fatal(err)
		}
		in := &Buf{}
		if kind, _, err := ReadFrame(rwc, in, 64); err != nil || kind != FrameResult || len(in.B) != 1 || in.B[0] != want {
			t.Fatalf("%s: kind %d, %v, %v; want version %d", proto, kind, in.B, err, want)
		}
		rwc.Close()
	}
}

// The leader's one-pass read of a plain rail (plainRailQ) gives what the
// general path gives, for plain rails and for rails that differ from
// plain in one way each (numbers past a byte, another class, an error,
// bandwidth, a read latency, counters), side by side in one answer.
func TestPlainRailsReadAsTheGeneralPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for i := range 300 {
		rails := make([]RailResult, 1+rng.IntN(16))
		for k := range rails {
			rr := RailResult{Rail: rng.IntN(70) - 2, SrcDevice: "mlx5_" + strings.Repeat("x", rng.IntN(3)), DstDevice: "mlx5_1",
				Class: probe.ClassOK, SrcGID: rng.IntN(70) - 3, DstGID: rng.IntN(70), Flow: testFlow(rng), BackFlow: testFlow(rng),
				Latency: &probe.Latency{Samples: rng.IntN(1 << 22),
					MinNs: 900 + rng.Float64()*100, P50Ns: 1000 + rng.Float64()*100, P90Ns: 1100, P99Ns: 1200, P999Ns: 1500, MaxNs: 3000, StdevNs: rng.Float64() * 40}}
			switch rng.IntN(12) {
			case 0:
				rr.SrcDevice = strings.Repeat("d", 130)
			case 1:
				rr.Class = probe.ClassTimeout
			case 2:
				rr.Error = &probe.Error{Class: probe.ClassTimeout, Verb: "ibv_poll_cq", Cause: "no completion"}
			case 3:
				rr.Bandwidth = &probe.Bandwidth{Gbps: 390, MsgRate: 1e6, Bytes: 1 << 30, Duration: 0.02}
			case 4:
				rr.ReadLatency = &probe.Latency{Samples: 10, P50Ns: 2000}
			case 5:
				rr.Counts = []counters.Count{{Index: 1, N: 7}}
			case 6:
				rr.Latency = nil
			case 7:
				rr.Rail, rr.DstGID = 300, 200
			case 8:
				rr.Error = &probe.Error{Class: "x", Cause: "an ok rail with a note"} // "ok", then an error whose first byte reads as a flag
			}
			rails[k] = rr
		}
		v := TaskResult{SweepID: "s", Round: i, Src: "a", Dst: "b", Rails: rails}
		if i%2 == 0 {
			v.Reverse = &ReverseResult{Rails: rails[:len(rails)/2]}
		}
		msg := TaskResultQ.Append(nil, &v)
		want, err := TaskResultQ.Decode(msg)
		if err != nil {
			t.Fatal(err)
		}
		asTheLeaderReads(&want)
		got, err := DecodeAnswer(msg, AnswerRoom{Task: &Task{SweepID: "s", Round: i, Src: "a", Dst: "b"}})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("message %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
	// A sample count past 32 bits is refused by both paths, as the
	// general path's int() refuses it.
	big := TaskResult{SweepID: "s", Round: 1, Src: "a", Dst: "b", Rails: []RailResult{{Rail: 1, Class: probe.ClassOK,
		Latency: &probe.Latency{Samples: 1 << 33, P50Ns: 1000}}}}
	if _, err := DecodeAnswer(TaskResultQ.Append(nil, &big), AnswerRoom{Task: &Task{SweepID: "s", Round: 1, Src: "a", Dst: "b"}}); err == nil {
		t.Fatal("a sample count of 2^33 was read")
	}
	// A plain rail does take the one-pass read, and a rail of another
	// shape leaves the reader where it was.
	for _, c := range []struct {
		rr    RailResult
		plain bool
	}{
		{RailResult{Rail: 3, SrcDevice: "mlx5_3", Class: probe.ClassOK, Latency: &probe.Latency{Samples: 1000, P50Ns: 1000}}, true},
		{RailResult{Rail: 3, SrcDevice: "mlx5_3", Class: probe.ClassOK, Latency: &probe.Latency{Samples: 1000, P50Ns: 1000}, Flow: 0xc123}, true},
		{RailResult{Rail: 3, SrcDevice: "mlx5_3", Class: probe.ClassOK, Latency: &probe.Latency{Samples: 1000, P50Ns: 1000}, Flow: 0xc123,
			BackFlow: 0xc321}, true},
		{RailResult{Rail: 3, SrcDevice: "mlx5_3", Class: probe.ClassTimeout, Latency: &probe.Latency{Samples: 1000}}, false},
		// "ok" and an error whose bytes, read as a plain rail's flags,
		// sample count, codes and tail, would all pass: only the error
		// flag tells it.
		{RailResult{Rail: 3, Class: probe.ClassOK, Error: &probe.Error{Class: "x", Cause: "abcdefghij\x00\x00\x05\x05\x00"},
			Latency: &probe.Latency{Samples: 1000}}, false},
	} {
		enc := EncodeRailResults([]RailResult{c.rr}, true)
		r := reader{b: enc.b}
		var got RailResult
		if r.plainRailQ(&got, new(probe.Latency), new(LatQ)) != c.plain || !c.plain && len(r.b) != len(enc.b) || c.plain && len(r.b) != 0 {
			t.Fatalf("%+v: plain read %v, %d of %d bytes left", c.rr, !c.plain, len(r.b), len(enc.b))
		}
	}
}
