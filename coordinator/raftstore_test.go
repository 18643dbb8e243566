package coordinator

import (
	"bytes"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/rdmamesh/rdmamesh/coordinator/raftlog"
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

// TestOpenStoresMovesTheLog opens a data_dir an older rdmamesh wrote: its
// log is in raft.db. The log must come out of raftlog whole, raft.db must
// keep the term and vote and lose the log, and a crash at any point of the
// move must leave a data_dir that opens to the same log.
func TestOpenStoresMovesTheLog(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, c := range []struct {
		name  string
		crash func(t *testing.T, dir string) // the state a crash left
	}{
		{"clean", func(*testing.T, string) {}},
		{"crashed while copying", func(t *testing.T, dir string) {
			t.Helper()
			// A half-built log: it must be built again, not used.
			p, err := raftlog.Open(filepath.Join(dir, "raft-log.partial"), raftlog.Options{})
			if err != nil {
				t.Fatal(err)
			}
			storeEntries(t, p, 3, 10)
			p.Close()
		}},
		{"crashed while rewriting raft.db", func(t *testing.T, dir string) {
			t.Helper()
			// The copy was renamed into place; raft.db still has the
			// entries it copied, and half a rewrite lies beside it.
			b, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db")})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := raftlog.Migrate(b, filepath.Join(dir, "raft-log"), raftlog.Options{}); err != nil {
				t.Fatal(err)
			}
			b.Close()
			if err := os.WriteFile(filepath.Join(dir, "raft.db.rewrite"), []byte("half a bbolt file"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			old, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db")})
			if err != nil {
				t.Fatal(err)
			}
			storeEntries(t, old, 1, 40)
			if err := old.DeleteRange(1, 2); err != nil { // compacted once
				t.Fatal(err)
			}
			if err := old.SetUint64([]byte("CurrentTerm"), 7); err != nil {
				t.Fatal(err)
			}
			old.Close()
			before := fileSize(t, filepath.Join(dir, "raft.db"))
			c.crash(t, dir)

			st, err := openStores(dir, log)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := st.logs.(*raftlog.Store); !ok {
				t.Fatalf("the log store is a %T, want raftlog's", st.logs)
			}
			checkEntries(t, st.logs, 3, 40)
			if term, err := st.stable.GetUint64([]byte("CurrentTerm")); err != nil || term != 7 {
				t.Fatalf("term %d (%v) after the move, want 7", term, err)
			}
			if last, _ := st.stable.(raft.LogStore).LastIndex(); last != 0 {
				t.Fatalf("raft.db still holds entries up to %d", last)
			}
			for _, left := range []string{"raft-log.partial", "raft.db.rewrite"} {
				if _, err := os.Stat(filepath.Join(dir, left)); !os.IsNotExist(err) {
					t.Fatalf("%s left behind: %v", left, err)
				}
			}
			if after := fileSize(t, filepath.Join(dir, "raft.db")); after*4 > before {
				t.Fatalf("raft.db is %d bytes after the move, %d before: it kept the log's pages", after, before)
			}
			storeEntries(t, st.logs, 41, 42)
			if err := st.close(); err != nil {
				t.Fatal(err)
			}
			// Opened again, nothing moves and nothing is lost.
			st, err = openStores(dir, log)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := st.close(); err != nil {
					t.Error(err)
				}
			}()
			checkEntries(t, st.logs, 3, 42)
		})
	}
}

// TestOpenStoresRefusesALogAnOlderVersionWrote: after the move, an older
// rdmamesh started on the data_dir writes its log into raft.db again. The
// next start must not take that for a crash mid-move and drop it, whether
// the older version's log ends past the moved one or inside it.
func TestOpenStoresRefusesALogAnOlderVersionWrote(t *testing.T) {
	for _, c := range []struct {
		name       string
		moved, old uint64 // the last entries of raft-log and of raft.db
	}{{"past the moved log", 10, 12}, {"inside the moved log", 20, 12}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			rl, err := raftlog.Open(filepath.Join(dir, "raft-log"), raftlog.Options{})
			if err != nil {
				t.Fatal(err)
			}
			storeEntries(t, rl, 1, c.moved)
			rl.Close()
			old, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db")})
			if err != nil {
				t.Fatal(err)
			}
			storeEntries(t, old, 1, c.old-1)
			l := roundEntry(c.old)
			l.Term = 2 // written by a later leader than raft-log's entry
			if err := old.StoreLog(l); err != nil {
				t.Fatal(err)
			}
			old.Close()
			_, err = openStores(dir, slog.New(slog.DiscardHandler))
			if err == nil || !strings.Contains(err.Error(), "an older rdmamesh ran on this data_dir") {
				t.Fatalf("open after an older version wrote its own log: %v", err)
			}
			b, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db")})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if last, _ := b.LastIndex(); last != c.old {
				t.Fatalf("raft.db's log ends at %d after the refusal, want %d", last, c.old)
			}
		})
	}
}

// TestOpenStoresDropsALogBelowTheSnapshot: a log that ends below the
// newest snapshot is emptied at open, so that the leader's next entry (the
// snapshot's index + 1) is taken instead of refused as a gap.
func TestOpenStoresDropsALogBelowTheSnapshot(t *testing.T) {
	dir := t.TempDir()
	log := slog.New(slog.DiscardHandler)
	st, err := openStores(dir, log)
	if err != nil {
		t.Fatal(err)
	}
	storeEntries(t, st.logs, 1, 3)
	_, trans := raft.NewInmemTransport("a")
	sink, err := st.snaps.Create(raft.SnapshotVersionMax, 1003, 2, raft.Configuration{}, 1, trans)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sink.Write([]byte("state")); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.close(); err != nil {
		t.Fatal(err)
	}
	if st, err = openStores(dir, log); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := st.close(); err != nil {
			t.Error(err)
		}
	}()
	if last, _ := st.logs.LastIndex(); last != 0 {
		t.Fatalf("the log ends at %d below the snapshot at 1003; want it emptied", last)
	}
	if err := st.logs.StoreLog(roundEntry(1004)); err != nil {
		t.Fatalf("the entry after the snapshot: %v", err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// BenchmarkRaftLogStore is one round's entry (25 KB, as at 1,024 nodes)
// stored and synced, as raft's leader stores each round: in raft.db (bolt,
// where older versions kept the log) and in raftlog.
func BenchmarkRaftLogStore(b *testing.B) {
	for _, c := range []struct {
		name string
		open func(dir string) (raft.LogStore, func() error, error)
	}{
		{"raft.db", func(dir string) (raft.LogStore, func() error, error) {
			s, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db")})
			if err != nil {
				return nil, nil, err
			}
			return s, s.Close, nil
		}},
		{"raftlog", func(dir string) (raft.LogStore, func() error, error) {
			s, err := raftlog.Open(filepath.Join(dir, "raft-log"), raftlog.Options{})
			if err != nil {
				return nil, nil, err
			}
			return s, s.Close, nil
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, closeStore, err := c.open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				if err := closeStore(); err != nil {
					b.Error(err)
				}
			}()
			logs := make([]*raft.Log, 64)
			for i := range logs {
				logs[i] = roundEntry(uint64(i))
			}
			i := uint64(0)
			b.SetBytes(int64(len(logs[0].Data)))
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
