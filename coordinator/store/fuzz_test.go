package store

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime/metrics"
	"slices"
	"sync"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// The raft entry decoders and the snapshot reader read what a leader or a
// peer wrote, but a corrupt disk or a bug elsewhere must not turn into a
// crash or an out-of-memory kill: fed garbage, they return an error. (The
// FSM's Apply then panics on purpose, so replicas never diverge silently;
// these targets call the decoders below it.) Each target also bounds what
// one input may allocate, so a length field read from the input cannot make
// a decoder reserve gigabytes before it notices the data is not there.
//
// Two layers are fuzzed separately: the bytes as stored (version byte,
// flate), and the inflated payload behind them, which a mutation fuzzer
// could otherwise never reach through the compression.

// heapAllocs is the cumulative bytes allocated on the heap.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// boundedAlloc runs fn and fails when it allocated more than a fixed 64 MB
// plus what inflating in could give (flate expands at most about 1,032x).
func boundedAlloc(t *testing.T, in []byte, fn func()) {
	t.Helper()
	before := heapAllocs()
	fn()
	if used, limit := heapAllocs()-before, uint64(64<<20+1100*len(in)); used > limit {
		t.Fatalf("decoding %d bytes allocated %d MB (limit %d MB)", len(in), used>>20, limit>>20)
	}
}

// deflate compresses payload the way the encoders do.
func deflate(tb testing.TB, prefix []byte, payload []byte) []byte {
	tb.Helper()
	var b bytes.Buffer
	b.Write(prefix)
	zw, _ := flate.NewWriter(&b, flate.BestSpeed)
	if _, err := zw.Write(payload); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// inflate is the payload behind a flate stream that starts at skip.
func inflate(tb testing.TB, b []byte, skip int) []byte {
	tb.Helper()
	out, err := io.ReadAll(flate.NewReader(bytes.NewReader(b[skip:])))
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// fuzzNodes is the sweep every round target decodes against.
var fuzzNodes = gridNodes(4, 2)

// fuzzFSM is an FSM holding sweep "s1" over fuzzNodes, with one round and
// a retest plan committed, so entries for it reach the cell store.
func fuzzFSM(tb testing.TB) *FSM {
	tb.Helper()
	f := New(3, nil)
	for _, e := range fuzzEntries(tb)[:3] {
		f.Apply(&raft.Log{Data: e})
	}
	return f
}

// fuzzEntries are well-formed entries of every type, for seeds; built once
// per process, as every execution starts from them.
func fuzzEntries(tb testing.TB) [][]byte {
	tb.Helper()
	fuzzEntriesOnce.Do(func() { fuzzEntriesData = makeFuzzEntries(tb) })
	return fuzzEntriesData
}

var (
	fuzzEntriesOnce sync.Once
	fuzzEntriesData [][]byte
)

func makeFuzzEntries(tb testing.TB) [][]byte {
	tb.Helper()
	x := NewNodeIndex(fuzzNodes)
	rng := rand.New(rand.NewPCG(7, 8))
	grid := func(round int) []byte {
		b, err := EncodeRound(&x, sweep.RoundResult{SweepID: "s1", Round: round, Cells: randomCells(rng, fuzzNodes, round)})
		if err != nil {
			tb.Fatal(err)
		}
		if rr, err := wire.ReadRound(b[1:]); err != nil || rr.Cells == 0 || len(rr.Whole) != 0 {
			tb.Fatalf("round %d: %v; want grid cells only", round, err)
		}
		return b
	}
	dr := 1
	return [][]byte{
		mustStart(tb, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning}, Spec: sweep.Spec{Params: probe.DefaultTestParams()}, Nodes: fuzzNodes}),
		grid(0),
		// Round 3 is a confirmation round: its cells add attempts.
		EncodeRetestPlan(sweep.RetestPlan{SweepID: "s1", Pass: 1, Pairs: 1, Rounds: []scheduler.Round{{Index: 3}}}),
		grid(3),
		// Round 2 mixes a grid cell with cells kept whole.
		entry(tb, EntryRound, sweep.RoundResult{SweepID: "s1", Round: 2, Cells: []matrix.Cell{okCell("n000", "n001", 0),
			{Src: "n001", Dst: "n002", Rail: 0, DstRail: &dr, Class: probe.ClassPortDown, Error: &probe.Error{Class: probe.ClassPortDown, Cause: "down"}},
			{Src: "x", Dst: "y", Rail: 3, Class: probe.ClassOK}}}).Data,
		EncodeEnd(End{SweepID: "s1", State: api.SweepDone}),
	}
}

// readAll materialises every cell of every sweep, then analyses each sweep
// as the coordinator's matrix endpoint does (BuildFrom over the frozen
// grid): what a decoder accepted must be readable.
func readAll(f *FSM) int {
	n := 0
	for _, id := range slices.Clone(f.order) {
		sv, ok := f.sweepData(id)
		if !ok {
			continue
		}
		n += len(sv.Cells)
		if sv, grid, ok := f.Grid(id); ok {
			// BuildFrom asks Has only for nodes with fewer ports than a rail.
			grid.Has(0, 0)
			matrix.BuildFrom(sv.Nodes, grid, grid.ExtraCells(), matrix.DefaultThresholds())
		}
	}
	return n
}

// FuzzRoundEntry decodes a round entry as stored (entry type byte
// removed): version, flate and payload.
func FuzzRoundEntry(f *testing.F) {
	for _, e := range fuzzEntries(f) {
		f.Add(e[1:])
		f.Add(e[1 : 1+len(e)/2])
	}
	f.Add([]byte{})
	f.Add([]byte{wire.RoundVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		boundedAlloc(t, b, func() { decodeRound(t, b) })
	})
}

// FuzzRoundPayload decodes the inflated payload of a round entry.
func FuzzRoundPayload(f *testing.F) {
	for _, e := range fuzzEntries(f) {
		if EntryType(e[0]) == EntryRound {
			p := inflate(f, e, 2)
			f.Add(p)
			f.Add(p[:len(p)/3])
		}
	}
	f.Add([]byte("\x02s1\x00\x01\x02\x02ok\x01"))
	f.Fuzz(func(t *testing.T, p []byte) {
		b := deflate(t, []byte{wire.RoundVersion}, p)
		boundedAlloc(t, p, func() { decodeRound(t, b) })
	})
}

// decodeRound walks every cell of b, then applies it to an FSM holding a
// sweep and reads every cell back.
func decodeRound(t *testing.T, b []byte) {
	t.Helper()
	x := NewNodeIndex(fuzzNodes)
	if r, err := wire.ReadRound(b); err == nil {
		var c wire.GridCodes
		for range r.Cells {
			if r.Next(&c) != nil {
				break
			}
			if int(c.Src) < x.n && int(c.Dst) < x.n && int(c.Rail) < x.rails {
				x.wholeCell(&r.RoundHead, &c)
			}
		}
		r.Release()
	}
	fs := fuzzFSM(t)
	if fs.applyRound(b) == nil {
		readAll(fs)
	}
}

// FuzzFSMEntry applies one entry of any type (its first byte) to an FSM
// that holds a running sweep, through the decoders Apply dispatches to,
// then reads every cell and snapshots the result.
func FuzzFSMEntry(f *testing.F) {
	for _, e := range fuzzEntries(f) {
		f.Add(e)
		f.Add(e[:len(e)/2])
	}
	f.Add([]byte{byte(EntrySweepStart)})
	f.Add([]byte{byte(EntryRound), '{', '}'})
	f.Add([]byte{99})
	f.Fuzz(func(t *testing.T, e []byte) {
		boundedAlloc(t, e, func() {
			fs := fuzzFSM(t)
			if err := fs.applyEntry(e); err != nil {
				return
			}
			readAll(fs)
			roundTripSnapshot(t, fs)
		})
	})
}

// applyEntry is Apply returning the decoder's error instead of panicking.
func (f *FSM) applyEntry(e []byte) (err error) {
	if len(e) == 0 {
		return fmt.Errorf("empty entry")
	}
	handler, ok := handlers[EntryType(e[0])]
	if !ok {
		return fmt.Errorf("unknown entry type %d", e[0])
	}
	return handler(f, e[1:])
}

// roundTripSnapshot persists fs and restores it: whatever state the
// decoders accepted must survive a snapshot.
func roundTripSnapshot(t *testing.T, fs *FSM) {
	t.Helper()
	g := New(fs.keep, nil)
	if err := g.Restore(io.NopCloser(bytes.NewReader(snapshotBytes(t, fs)))); err != nil {
		t.Fatalf("a snapshot of accepted state does not restore: %v", err)
	}
	if a, b := readAll(fs), readAll(g); a != b {
		t.Fatalf("snapshot holds %d cells, restored %d", a, b)
	}
}

// fuzzSnapshots is a snapshot of an FSM with grid cells, kept-whole
// cells, errors, bandwidth and retests.
func fuzzSnapshots(tb testing.TB) [][]byte {
	tb.Helper()
	fs := New(3, nil)
	for _, e := range fuzzEntries(tb) {
		fs.Apply(&raft.Log{Data: e})
	}
	return [][]byte{snapshotBytes(tb, fs)}
}

// FuzzSnapshot reads a snapshot as stored: version, flate, payload.
func FuzzSnapshot(f *testing.F) {
	for _, s := range fuzzSnapshots(f) {
		f.Add(s)
		f.Add(s[:len(s)/2])
	}
	f.Add([]byte{wire.SnapshotVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		boundedAlloc(t, b, func() { restoreAll(t, b) })
	})
}

// FuzzSnapshotPayload reads the inflated payload of a binary snapshot.
func FuzzSnapshotPayload(f *testing.F) {
	bin := fuzzSnapshots(f)[0]
	p := inflate(f, bin, 1)
	f.Add(p)
	f.Add(p[:len(p)/2])
	f.Add([]byte{1})
	f.Add([]byte{1, 2, 1})
	f.Fuzz(func(t *testing.T, p []byte) {
		b := deflate(t, []byte{wire.SnapshotVersion}, p)
		boundedAlloc(t, p, func() { restoreAll(t, b) })
	})
}

// restoreAll restores b and, when it is accepted, reads every cell and
// snapshots the result again.
func restoreAll(t *testing.T, b []byte) {
	t.Helper()
	fs := New(50, nil)
	if fs.Restore(io.NopCloser(bytes.NewReader(b))) != nil {
		return
	}
	readAll(fs)
	roundTripSnapshot(t, fs)
}

// TestSnapshotImpossibleCells changes each grid class byte of a snapshot's
// payload to what a store never writes (flags without a class, a cell past
// the grid's last slot): the snapshot must be refused, or restore to a
// state that reads and analyses without a panic. Both were panics, found
// by running every single-byte change of FuzzSnapshotPayload's seed
// through its property; the crashers are in testdata/fuzz.
func TestSnapshotImpossibleCells(t *testing.T) {
	p := inflate(t, fuzzSnapshots(t)[0], 1)
	// The seed's one grid block: its 64 class bytes follow its flags byte.
	fs := New(3, nil)
	for _, e := range fuzzEntries(t) {
		fs.Apply(&raft.Log{Data: e})
	}
	class := fs.sweeps["s1"].Cells.blocks[0].Class
	at := bytes.Index(p, class[:])
	if at < 0 || bytes.Count(p, class[:]) != 1 {
		t.Fatal("cannot find the grid block in the snapshot payload")
	}
	tried := 0
	for i := at; i < at+blockLen; i++ {
		for _, v := range []byte{flagLat, flagBW, flagLat | flagBW, 1, flagLat | 1} {
			q := bytes.Clone(p)
			if q[i] == v {
				continue
			}
			q[i] = v
			fs := New(50, nil)
			if fs.Restore(io.NopCloser(bytes.NewReader(deflate(t, []byte{wire.SnapshotVersion}, q)))) != nil {
				continue
			}
			tried++
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("payload byte %d set to %#x: restored, then %v", i, v, r)
					}
				}()
				readAll(fs)
			}()
		}
	}
	if tried == 0 {
		t.Fatal("no variant restored: the test no longer reaches the grid")
	}
}
