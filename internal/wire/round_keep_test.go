package wire

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// FinishKeep's codes must be what decoding its bytes gives, cell for cell,
// and its bytes Finish's.
func TestFinishKeepMatchesDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 20 {
		grid, whole := testRound(rng, 2+rng.IntN(8))
		for i := range grid {
			// Rounds below the entry's, odd sample counts, a second error.
			if rng.IntN(5) == 0 {
				grid[i].Round = rng.IntN(4)
			}
			if l := grid[i].Latency; l != nil && rng.IntN(4) == 0 {
				l2 := *l
				l2.Samples = rng.IntN(5000)
				grid[i].Latency = &l2
			}
			if rng.IntN(7) == 0 {
				grid[i].Class, grid[i].Error = probe.ClassTimeout, &probe.Error{Class: probe.ClassTimeout, Errno: trial}
			}
		}
		// An error and whole cells in every trial: an encoder fresh from
		// its pool writes an empty table as nil, a reused one as empty, so
		// the bytes of two encoders compare only when neither is empty.
		grid[0].Class, grid[0].Error = probe.ClassTimeout, &probe.Error{Class: probe.ClassTimeout}
		want := encodeRound(t, grid, whole)
		enc := NewRoundEncoder("s1", 4)
		for i := range grid {
			enc.Grid(&grid[i])
		}
		for i := range whole {
			enc.Whole(&whole[i])
		}
		b, rc, err := enc.FinishKeep(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, want) {
			t.Fatalf("trial %d: FinishKeep's bytes differ from Finish's", trial)
		}
		rr, err := ReadRound(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rc.RoundHead, rr.RoundHead) {
			t.Fatalf("trial %d: head\n kept %+v\n read %+v", trial, rc.RoundHead, rr.RoundHead)
		}
		for i := range rr.Cells {
			var got, dec GridCodes // fresh: Next leaves absent figures as they were
			if err := rr.Next(&dec); err != nil {
				t.Fatal(err)
			}
			if err := rc.Next(&got); err != nil || got != dec {
				t.Fatalf("trial %d cell %d: kept %+v (%v), decoded %+v", trial, i, got, err, dec)
			}
		}
		var c GridCodes
		if rc.Next(&c) == nil {
			t.Fatal("kept codes go on past the entry's cells")
		}
		// The kept whole cells are copies: the caller may reuse its own.
		whole[0].Latency.P50Ns, *whole[1].Error = 99, probe.Error{}
		if !reflect.DeepEqual(rc.Whole, rr.Whole) {
			t.Fatalf("trial %d: kept whole cells share the caller's", trial)
		}
		rr.Release()
		rc.Release()
	}
}

// A head given to Finish or FinishKeep comes before the entry, in the
// one copy.
func TestFinishPutsTheHeadFirst(t *testing.T) {
	enc := func() *RoundEncoder {
		e := NewRoundEncoder("s1", 3)
		e.Grid(&GridCell{Src: 1, Dst: 2, Rail: 0, Round: 3, Class: probe.ClassOK, Latency: &probe.Latency{Samples: 10, P50Ns: 1500}})
		return e
	}
	plain, err := enc().Finish(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]byte{7, 8}, plain...)
	after, err := enc().Finish([]byte{7, 8})
	if err != nil || !bytes.Equal(after, want) {
		t.Fatalf("Finish with a head: %x (%v), want %x", after, err, want)
	}
	kept, rc, err := enc().FinishKeep([]byte{7, 8})
	if err != nil || !bytes.Equal(kept, want) || rc.Cells != 1 {
		t.Fatalf("FinishKeep with a head: %x (%v), want %x", kept, err, want)
	}
	rc.Release()
}
