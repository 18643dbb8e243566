package coordinator

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

// roundEntry is a log entry the size of a 1,024-node round's (about
// 25 KB), its bytes seeded by index so a read can be checked.
func roundEntry(i uint64) *raft.Log {
	b := make([]byte, 25<<10)
	r := rand.New(rand.NewPCG(i, 17))
	for j := range b {
		b[j] = byte(r.Uint32())
	}
	return &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: b}
}

func storeEntries(t *testing.T, s raft.LogStore, from, to uint64) {
	t.Helper()
	for i := from; i <= to; i++ {
		if err := s.StoreLogs([]*raft.Log{roundEntry(i)}); err != nil {
			t.Fatalf("store entry %d: %v", i, err)
		}
	}
}

func checkEntries(t *testing.T, s raft.LogStore, from, to uint64) {
	t.Helper()
	if first, _ := s.FirstIndex(); first != from {
		t.Errorf("first index %d, want %d", first, from)
	}
	if last, _ := s.LastIndex(); last != to {
		t.Errorf("last index %d, want %d", last, to)
	}
	for i := from; i <= to; i++ {
		var l raft.Log
		if err := s.GetLog(i, &l); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if !bytes.Equal(l.Data, roundEntry(i).Data) {
			t.Fatalf("entry %d came back changed", i)
		}
	}
}

// TestRaftLogWithoutASyncedFreelist: the raft log as the coordinator opens
// it writes no freelist with its commits (the meta page says so), keeps
// every entry across a close, and on reopening knows the pages raft's
// compaction freed (it rebuilds the list from the pages), so the log
// reuses them instead of growing.
func TestRaftLogWithoutASyncedFreelist(t *testing.T) {
	dir := t.TempDir()
	st, err := openStores(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	storeEntries(t, st.logs, 1, 120)
	if err := st.logs.DeleteRange(1, 100); err != nil { // as raft compacts after a snapshot
		t.Fatal(err)
	}
	if err := st.close(); err != nil {
		t.Fatal(err)
	}
	if fl := metaFreelist(t, filepath.Join(dir, "raft.db")); fl != math.MaxUint64 {
		t.Errorf("raft.db's meta page has its freelist at page %d: commits wrote the freelist", fl)
	}
	db, err := bbolt.Open(filepath.Join(dir, "raft.db"), 0o600, boltOptions())
	if err != nil {
		t.Fatal(err)
	}
	free := db.Stats().FreePageN
	db.Close()
	// The deleted entries' pages (bbolt's pages are the OS's), less a
	// margin for the branch pages around them.
	if want := 100 * (25 << 10) / os.Getpagesize() * 9 / 10; free < want {
		t.Errorf("reopened raft.db knows %d free pages, want the %d or more its deleted entries held", free, want)
	}
	st, err = openStores(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	checkEntries(t, st.logs, 101, 120)
	before, err := os.Stat(filepath.Join(dir, "raft.db"))
	if err != nil {
		t.Fatal(err)
	}
	storeEntries(t, st.logs, 121, 180)
	checkEntries(t, st.logs, 101, 180)
	after, err := os.Stat(filepath.Join(dir, "raft.db"))
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() > before.Size() {
		t.Errorf("raft.db grew from %d to %d bytes for 60 entries where 100 had been freed", before.Size(), after.Size())
	}
}

// metaFreelist reads where bbolt's current meta page says the freelist
// is (bbolt's file format, version 2): all ones when none was written.
func metaFreelist(t *testing.T, path string) uint64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	// A meta page: a 16-byte page header, then magic, version, page size
	// and flags (4 bytes each), the root bucket (16), the freelist's
	// page, the high water mark and the transaction ID (8 each).
	meta := func(off int) (txid, freelist uint64) {
		m := b[off+16:]
		if le.Uint32(m[0:]) != 0xED0CDAED {
			t.Fatalf("raft.db: no bbolt meta page at %d", off)
		}
		return le.Uint64(m[48:]), le.Uint64(m[32:])
	}
	tx0, fl0 := meta(0)
	tx1, fl1 := meta(int(le.Uint32(b[16+8:])))
	if tx1 > tx0 {
		return fl1
	}
	return fl0
}

// TestRaftLogOpensEitherWay: a raft.db written with bbolt's defaults (a
// coordinator before Session 17) opens as the coordinator opens it now,
// and the other way round (a rollback), with every entry.
func TestRaftLogOpensEitherWay(t *testing.T) {
	var defaults *bbolt.Options // raft-boltdb's nil: bbolt's defaults
	for name, order := range map[string][]*bbolt.Options{
		"written with the defaults": {defaults, boltOptions(), defaults},
		"written as now":            {boltOptions(), defaults, boltOptions()},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "raft.db")
			for step, opts := range order {
				s, err := raftboltdb.New(raftboltdb.Options{Path: path, BoltOptions: opts})
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				from := uint64(step)*20 + 1
				if step > 0 { // the previous open's entries, then gone as raft compacts
					checkEntries(t, s, from-20, from-1)
					if err := s.DeleteRange(from-20, from-1); err != nil {
						t.Fatal(err)
					}
				}
				storeEntries(t, s, from, from+19)
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRaftLogStore is one round's entry (25 KB, as at 1,024 nodes)
// stored and synced, as raft's leader stores each round: with bbolt's
// defaults and as the coordinator opens raft.db.
func BenchmarkRaftLogStore(b *testing.B) {
	for _, c := range []struct {
		name string
		opts *bbolt.Options
	}{{"bbolt-defaults", nil}, {"coordinator", boltOptions()}} {
		b.Run(c.name, func(b *testing.B) {
			s, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(b.TempDir(), "raft.db"), BoltOptions: c.opts})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			logs := make([]*raft.Log, 64)
			for i := range logs {
				logs[i] = roundEntry(uint64(i))
			}
			i := uint64(0)
			for b.Loop() {
				i++
				l := *logs[i%64]
				l.Index = i
				if err := s.StoreLogs([]*raft.Log{&l}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
