package wire

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// DecodeTaskResultIn gives what Decode gives but the rails' device names,
// whether its scratch is too small, large enough, or still holds the
// previous message's rails.
func TestDecodeTaskResultInMatchesDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	scratch := make([]RailResult, 0, 4)
	for i := range 200 {
		var v TaskResult
		fill(reflect.ValueOf(&v).Elem(), rng, i%2 == 0)
		b := TaskResultMsg.Append(nil, &v)
		want, err := TaskResultMsg.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		// It leaves the device names out, and only them.
		for _, rails := range [][]RailResult{want.Rails, reverseRails(want.Reverse)} {
			for k := range rails {
				rails[k].SrcDevice, rails[k].DstDevice = "", ""
			}
		}
		got, err := DecodeTaskResultIn(b, scratch, make([]probe.Latency, i%5))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("message %d:\n got %+v\nwant %+v", i, got, want)
		}
		if i%3 == 0 {
			scratch = make([]RailResult, 0, 64)
		}
	}
	if _, err := DecodeTaskResultIn([]byte{TaskResultMsg.Version() + 1}, scratch, nil); err == nil {
		t.Fatal("another version decoded")
	}
}

// DecodeTaskIn gives what Decode gives, with or without room in scratch.
func TestDecodeTaskInMatchesDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	scratch := make([]probe.RailPair, 0, 4)
	for i := range 200 {
		var v Task
		fill(reflect.ValueOf(&v).Elem(), rng, i%2 == 0)
		b := TaskMsg.Append(nil, &v)
		want, err := TaskMsg.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeTaskIn(b, scratch)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("message %d:\n got %+v\nwant %+v", i, got, want)
		}
		if i%3 == 0 {
			scratch = make([]probe.RailPair, 0, 64)
		}
	}
}

func reverseRails(r *ReverseResult) []RailResult {
	if r == nil {
		return nil
	}
	return r.Rails
}
