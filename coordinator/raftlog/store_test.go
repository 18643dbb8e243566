package raftlog

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// entry is a raft log entry whose every field depends on index and seed,
// so that a misplaced or stale frame reads differently.
func entry(index, term uint64, rng *rand.Rand) *raft.Log {
	l := &raft.Log{Index: index, Term: term, Type: raft.LogType(rng.IntN(7))}
	if rng.IntN(4) > 0 {
		l.Data = make([]byte, rng.IntN(3000))
		for i := range l.Data {
			l.Data[i] = byte(rng.Uint32())
		}
	}
	if rng.IntN(3) == 0 {
		l.Extensions = []byte(fmt.Sprintf("ext-%d-%d", index, term))
	}
	if rng.IntN(2) == 0 {
		l.AppendedAt = time.Unix(1700000000+int64(index), int64(rng.IntN(1e9)))
	}
	return l
}

// sameLog compares what raft reads back: nil and empty slices are the
// same to it.
func sameLog(a, b *raft.Log) bool {
	return a.Index == b.Index && a.Term == b.Term && a.Type == b.Type &&
		bytes.Equal(a.Data, b.Data) && bytes.Equal(a.Extensions, b.Extensions) &&
		a.AppendedAt.Equal(b.AppendedAt)
}

// agree checks that s holds exactly what model holds, entry by entry.
func agree(t *testing.T, step string, s *Store, model *raft.InmemStore) {
	t.Helper()
	mf, _ := model.FirstIndex()
	ml, _ := model.LastIndex()
	f, _ := s.FirstIndex()
	l, _ := s.LastIndex()
	if f != mf || l != ml {
		t.Fatalf("%s: log [%d, %d], want [%d, %d]", step, f, l, mf, ml)
	}
	for i := mf; i <= ml && ml > 0; i++ {
		var got, want raft.Log
		if err := model.GetLog(i, &want); err != nil {
			t.Fatalf("%s: model entry %d: %v", step, i, err)
		}
		if err := s.GetLog(i, &got); err != nil {
			t.Fatalf("%s: entry %d: %v", step, i, err)
		}
		if !sameLog(&got, &want) {
			t.Fatalf("%s: entry %d read back as %+v, want %+v", step, i, got, want)
		}
	}
	var l0 raft.Log
	for _, i := range []uint64{mf - 1, ml + 1} {
		if err := s.GetLog(i, &l0); !errors.Is(err, raft.ErrLogNotFound) && (i < mf || i > ml) {
			t.Fatalf("%s: entry %d outside [%d, %d]: %v, want ErrLogNotFound", step, i, mf, ml, err)
		}
	}
}

// TestMatchesInmemStore runs random appends, head and tail cuts and
// reopens against raft's own in-memory store, with segments small enough
// that entries roll over many files and cuts land on and between their
// boundaries.
func TestMatchesInmemStore(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			dir := t.TempDir()
			o := Options{SegmentBytes: 16 << 10}
			s, err := Open(dir, o)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { s.Close() }()
			model := raft.NewInmemStore()
			term := uint64(1)
			// After a reopen the store's first index may drop back to
			// its segment's start (cutHead): the model keeps those
			// entries as long as the store does.
			for op := range 300 {
				step := fmt.Sprintf("op %d", op)
				first, _ := model.FirstIndex()
				last, _ := model.LastIndex()
				switch k := rng.IntN(20); {
				case k < 12 || last == 0:
					start := last + 1
					if last == 0 {
						start = uint64(rng.IntN(50)) + 1
					}
					batch := make([]*raft.Log, 1+rng.IntN(8))
					for i := range batch {
						batch[i] = entry(start+uint64(i), term, rng)
					}
					if err := s.StoreLogs(batch); err != nil {
						t.Fatalf("%s: store %d..: %v", step, start, err)
					}
					if err := model.StoreLogs(batch); err != nil {
						t.Fatal(err)
					}
				case k < 15:
					hi := first + uint64(rng.IntN(int(last-first)+2))
					step += fmt.Sprintf(": cut head to %d", hi)
					if err := s.DeleteRange(first, hi); err != nil {
						t.Fatalf("%s: %v", step, err)
					}
					if err := model.DeleteRange(first, hi); err != nil {
						t.Fatal(err)
					}
				case k < 18:
					lo := first + uint64(rng.IntN(int(last-first)+1))
					step += fmt.Sprintf(": cut tail from %d", lo)
					if err := s.DeleteRange(lo, last); err != nil {
						t.Fatalf("%s: %v", step, err)
					}
					if err := model.DeleteRange(lo, last); err != nil {
						t.Fatal(err)
					}
					term++
				default:
					step += ": reopen"
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					r, err := Open(dir, o)
					if err != nil {
						t.Fatalf("%s: %v", step, err)
					}
					s = r
					// The store may serve a head cut's leftovers
					// again; they are entries the model dropped, so
					// drop them from the store too, as raft's next
					// compaction would.
					if f, _ := s.FirstIndex(); f < first && first <= last {
						if err := s.DeleteRange(f, first-1); err != nil {
							t.Fatalf("%s: %v", step, err)
						}
					}
				}
				agree(t, step, s, model)
			}
		})
	}
}

func TestRefusesWhatRaftNeverAsks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.StoreLogs([]*raft.Log{entry(10, 1, rng), entry(11, 1, rng), entry(12, 1, rng)}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		do   func() error
		want string
	}{
		{"gap", func() error { return s.StoreLog(entry(14, 1, rng)) }, "entry 14 does not follow the log's last entry 12"},
		{"overlap", func() error { return s.StoreLog(entry(12, 2, rng)) }, "entry 12 does not follow"},
		{"holes in a batch", func() error { return s.StoreLogs([]*raft.Log{entry(13, 1, rng), entry(15, 1, rng)}) }, "entries 13 and 15 of one append are not consecutive"},
		{"middle", func() error { return s.DeleteRange(11, 11) }, "DeleteRange(11, 11) lies inside the log [10, 12]"},
	} {
		err := c.do()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
	if l, _ := s.LastIndex(); l != 12 {
		t.Fatalf("refused writes changed the log: last %d", l)
	}
	if err := s.StoreLog(entry(13, 1, rng)); err != nil {
		t.Fatalf("an append after refusals: %v", err)
	}
}

// segFile is the one segment file in dir.
func segFile(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*"+suffix))
	if len(m) != 1 {
		t.Fatalf("segments %v, want one", m)
	}
	return m[0]
}

// TestTornTailIsCut damages the newest entry as a crash during its append
// would, and checks that a reopened log ends before it, with nothing of
// it or after it left in the file to pass for a later entry.
func TestTornTailIsCut(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(b []byte) // the last frame's bytes
	}{
		{"a flipped byte", func(b []byte) { b[len(b)-1] ^= 0x40 }},
		{"the body not written", func(b []byte) { clear(b[frameLen:]) }},
		{"only the length written", func(b []byte) { clear(b[4:]) }},
		{"the header not written", func(b []byte) { clear(b[:frameLen]) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			dir := t.TempDir()
			s, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var logs []*raft.Log
			for i := uint64(1); i <= 6; i++ {
				l := entry(i, 1, rng)
				l.Data = bytes.Repeat([]byte{byte(i)}, 100)
				logs = append(logs, l)
				if err := s.StoreLog(l); err != nil {
					t.Fatal(err)
				}
			}
			seg := s.segs[0]
			from, to := seg.offs[4], seg.offs[5]
			s.Close()
			// As if 5 and 6 had been one append a crash interrupted:
			// 5 torn, 6 whole after it.
			path := segFile(t, dir)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			c.damage(b[from:to])
			if err := os.WriteFile(path, b, 0o640); err != nil {
				t.Fatal(err)
			}
			var warned bytes.Buffer
			o := Options{Log: slog.New(slog.NewTextHandler(&warned, nil))}
			if s, err = Open(dir, o); err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if l, _ := s.LastIndex(); l != 4 {
				t.Fatalf("last %d after a torn entry 5, want 4", l)
			}
			if !strings.Contains(warned.String(), "cut the newest segment") {
				t.Errorf("no warning of the cut: %q", warned.String())
			}
			b, _ = os.ReadFile(path)
			if !bytes.Equal(b[from:], make([]byte, len(b)-int(from))) {
				t.Fatalf("bytes after entry 4 were not cleared: entry 6's frame is still at %d", to)
			}
			// The same entries appended again read back as themselves.
			if err := s.StoreLogs(logs[4:]); err != nil {
				t.Fatal(err)
			}
			model := raft.NewInmemStore()
			if err := model.StoreLogs(logs); err != nil {
				t.Fatal(err)
			}
			agree(t, "after the torn tail", s, model)
		})
	}
}

// TestTailCutLeavesNoStaleFrame cuts a tail and appends shorter entries of
// a later term in its place: after a reopen the log must end at the new
// entries, not pick up the old one that followed them.
func TestTailCutLeavesNoStaleFrame(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	model := raft.NewInmemStore()
	var logs []*raft.Log
	for i := uint64(1); i <= 8; i++ {
		l := entry(i, 1, rng)
		l.Data, l.Extensions = make([]byte, 200), nil
		logs = append(logs, l)
	}
	if err := s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := model.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRange(5, 8); err != nil {
		t.Fatal(err)
	}
	if err := model.DeleteRange(5, 8); err != nil {
		t.Fatal(err)
	}
	// Two entries of term 2 as long as old 5 and 6: old entry 7 would sit
	// just where entry 7 is looked for.
	var newer []*raft.Log
	for i := uint64(5); i <= 6; i++ {
		l := &raft.Log{Index: i, Term: 2, Data: make([]byte, 200)}
		newer = append(newer, l)
	}
	if err := s.StoreLogs(newer); err != nil {
		t.Fatal(err)
	}
	if err := model.StoreLogs(newer); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	agree(t, "reopened after a tail cut", s, model)
}

// smallSegments is a log in dir of n 500-byte entries over 4 KiB
// segments: seven entries a segment, so a few dozen span several.
func smallSegments(t *testing.T, dir string, n uint64, rng *rand.Rand) *Store {
	t.Helper()
	s, err := Open(dir, Options{SegmentBytes: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(1); i <= n; i++ {
		l := entry(i, 1, rng)
		l.Data = make([]byte, 500)
		if err := s.StoreLog(l); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestDamagedOlderSegmentIsAnError checks that an entry lost in the middle
// of the log stops the open with what to do, instead of a log with a gap.
func TestDamagedOlderSegmentIsAnError(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	dir := t.TempDir()
	s := smallSegments(t, dir, 40, rng)
	if len(s.segs) < 3 {
		t.Fatalf("%d segments, want several", len(s.segs))
	}
	seg := s.segs[0]
	at := seg.offs[len(seg.offs)-1]
	s.Close()
	f, err := os.OpenFile(seg.path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, frameLen), at); err != nil { // the first segment's last entry
		t.Fatal(err)
	}
	f.Close()
	_, err = Open(dir, Options{SegmentBytes: 4 << 10})
	if err == nil || !strings.Contains(err.Error(), "a gap") || !strings.Contains(err.Error(), "the raft log in "+dir+" is damaged: see") {
		t.Fatalf("open of a log missing an older entry: %v", err)
	}
}

func TestReadOnlyWritesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(1); i <= 3; i++ {
		if err := s.StoreLog(entry(i, 1, rng)); err != nil {
			t.Fatal(err)
		}
	}
	end := s.segs[0].offs[2]
	s.Close()
	path := segFile(t, dir)
	b, _ := os.ReadFile(path)
	b[end+frameLen] ^= 1 // entry 3 torn
	if err := os.WriteFile(path, b, 0o640); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if l, _ := r.LastIndex(); l != 2 {
		t.Fatalf("read-only last %d, want 2", l)
	}
	if err := r.StoreLog(entry(3, 1, rng)); err == nil {
		t.Fatal("a read-only log took an append")
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, b) {
		t.Fatal("a read-only open changed the segment")
	}
}

// TestCleanReopenWarnsOfNothing: a log closed after its appends has only
// zeros after its last entry, and Open must not report a torn append.
func TestCleanReopenWarnsOfNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StoreLogs([]*raft.Log{entry(1, 1, rng), entry(2, 1, rng)}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	var warned bytes.Buffer
	if s, err = Open(dir, Options{Log: slog.New(slog.NewTextHandler(&warned, nil))}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if warned.Len() > 0 {
		t.Fatalf("a clean reopen warned: %q", warned.String())
	}
}

// TestNewestSegmentWithoutHeader: a power loss just after a segment was
// created can leave it all zeros; it held no acknowledged entry, so Open
// drops it and keeps the rest.
func TestNewestSegmentWithoutHeader(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	logs := []*raft.Log{entry(1, 1, rng), entry(2, 1, rng), entry(3, 1, rng)}
	if err := s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.WriteFile(filepath.Join(dir, segName(4)), make([]byte, 4<<10), 0o640); err != nil {
		t.Fatal(err)
	}
	var warned bytes.Buffer
	if s, err = Open(dir, Options{Log: slog.New(slog.NewTextHandler(&warned, nil))}); err != nil {
		t.Fatalf("open with a zeroed newest segment: %v", err)
	}
	if warned.Len() > 0 {
		t.Errorf("an all-zero segment is no torn append, yet: %q", warned.String())
	}
	defer s.Close()
	model := raft.NewInmemStore()
	if err := model.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	agree(t, "after a zeroed newest segment", s, model)
	if err := s.StoreLog(entry(4, 1, rng)); err != nil {
		t.Fatalf("append after it: %v", err)
	}
}

// TestFailedHeadCutKeepsReadsSafe makes a compaction's unlink fail (the
// segment's name is a non-empty directory): the cut reports it, the store
// takes no more writes, and reads of the entries it dropped say
// ErrLogNotFound instead of panicking in raft's replication.
func TestFailedHeadCutKeepsReadsSafe(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	dir := t.TempDir()
	s := smallSegments(t, dir, 40, rng)
	defer s.Close()
	p, hi := s.segs[0].path, s.segs[1].last()
	os.Remove(p)
	if err := os.MkdirAll(filepath.Join(p, "x"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRange(1, hi); err == nil {
		t.Fatal("a compaction whose unlink failed reported no error")
	}
	first, _ := s.FirstIndex()
	var l raft.Log
	for _, i := range []uint64{1, first - 1} {
		if err := s.GetLog(i, &l); !errors.Is(err, raft.ErrLogNotFound) {
			t.Fatalf("entry %d after the failed cut (first %d): %v, want ErrLogNotFound", i, first, err)
		}
	}
	if err := s.GetLog(first, &l); err != nil {
		t.Fatalf("first entry %d after the failed cut: %v", first, err)
	}
	if err := s.StoreLog(entry(41, 1, rng)); err == nil || !strings.Contains(err.Error(), "takes no more writes") {
		t.Fatalf("append after a failed cut: %v", err)
	}
}

// TestMigrateSkipsAnOlderGap: raft-boltdb's log may have a gap below an
// installed snapshot; Migrate copies the run that ends at the last entry,
// and copies nothing once the log is in place.
func TestMigrateSkipsAnOlderGap(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	src := raft.NewInmemStore()
	var want []*raft.Log
	for i := uint64(1); i <= 30; i++ {
		if i > 10 && i < 20 {
			continue // entries 11..19: in the snapshot, never in this log
		}
		l := entry(i, 1, rng)
		if err := src.StoreLog(l); err != nil {
			t.Fatal(err)
		}
		if i >= 20 {
			want = append(want, l)
		}
	}
	dir := filepath.Join(t.TempDir(), "raft-log")
	moved, err := Migrate(src, dir, Options{})
	if err != nil || !moved {
		t.Fatalf("migrate: %v, moved %v", err, moved)
	}
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	model := raft.NewInmemStore()
	if err := model.StoreLogs(want); err != nil {
		t.Fatal(err)
	}
	agree(t, "migrated across a gap", s, model)
	if moved, err := Migrate(src, dir, Options{}); err != nil || moved {
		t.Fatalf("a second migrate: %v, moved %v", err, moved)
	}
}

// TestNewestSegmentWithNoWholeEntryIsLogged: a newest segment whose only
// append was torn (or whose first entry is damaged) holds no whole entry;
// Open drops it, and says so.
func TestNewestSegmentWithNoWholeEntryIsLogged(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	dir := t.TempDir()
	s := smallSegments(t, dir, 20, rng)
	newest := s.segs[len(s.segs)-1]
	path, keep := newest.path, newest.base-1
	s.Close()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff}, headLen+frameLen+3); err != nil { // the first entry's body
		t.Fatal(err)
	}
	f.Close()
	var warned bytes.Buffer
	if s, err = Open(dir, Options{SegmentBytes: 4 << 10, Log: slog.New(slog.NewTextHandler(&warned, nil))}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if l, _ := s.LastIndex(); l != keep {
		t.Fatalf("last %d, want %d (the segments before the damaged one)", l, keep)
	}
	if !strings.Contains(warned.String(), "cut the newest segment") || !strings.Contains(warned.String(), filepath.Base(path)) {
		t.Fatalf("the dropped segment was not logged: %q", warned.String())
	}
}
