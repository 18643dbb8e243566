package scale

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"sort"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"

	"github.com/rdmamesh/rdmamesh/matrix"
)

// raftLog sums the payloads of every entry in a stopped coordinator's
// raft.db, and reports the file's size.
func raftLog(path string) (payload, file int64, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, 0, err
	}
	// Read-only: a writable open would rebuild raft.db's freelist and
	// write it back into the file being measured.
	s, err := raftboltdb.New(raftboltdb.Options{Path: path, BoltOptions: &bbolt.Options{ReadOnly: true}})
	if err != nil {
		return 0, st.Size(), err
	}
	defer s.Close()
	first, err := s.FirstIndex()
	if err != nil {
		return 0, st.Size(), err
	}
	last, err := s.LastIndex()
	if err != nil {
		return 0, st.Size(), err
	}
	var l raft.Log
	for i := first; i <= last && i > 0; i++ {
		if err := s.GetLog(i, &l); err != nil {
			return payload, st.Size(), err
		}
		payload += int64(len(l.Data))
	}
	return payload, st.Size(), nil
}

// newestSnapshot is the size of the newest snapshot's state file.
func newestSnapshot(dir string) int64 {
	m, _ := filepath.Glob(filepath.Join(dir, "*", "state.bin"))
	if len(m) == 0 {
		return 0
	}
	sort.Strings(m) // names start with term-index-millis
	st, err := os.Stat(m[len(m)-1])
	if err != nil {
		return 0
	}
	return st.Size()
}

// payload streams the matrix JSON the API serves (web writes
// Matrix.WriteJSON) into counters, plain and gzipped at BestSpeed as web
// sends it, without holding it in memory.
func payload(m *matrix.Matrix) (plain, gz int64, err error) {
	var p, g counter
	zw, _ := gzip.NewWriterLevel(&g, gzip.BestSpeed)
	if err := m.WriteJSON(teeWriter{&p, zw}); err != nil {
		return 0, 0, err
	}
	if err := zw.Close(); err != nil {
		return 0, 0, err
	}
	return p.n, g.n, nil
}

type teeWriter struct {
	a *counter
	b *gzip.Writer
}

func (t teeWriter) Write(p []byte) (int, error) {
	t.a.Write(p)
	return t.b.Write(p)
}
