package scale

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/coordinator/raftlog"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// raftLog sums the payloads of every entry in a stopped coordinator's raft
// log, and reports what the log's segments and raft.db (the term and vote)
// take on disk.
func raftLog(dataDir string) (payload, files int64, err error) {
	for _, p := range []string{"raft.db", "raft-log/*"} {
		m, _ := filepath.Glob(filepath.Join(dataDir, p))
		for _, f := range m {
			st, err := os.Stat(f)
			if err != nil {
				return 0, files, err
			}
			files += st.Size()
		}
	}
	// Read-only: a writable open clears the newest segment's tail and
	// would write into the files being measured.
	s, err := raftlog.Open(filepath.Join(dataDir, "raft-log"), raftlog.Options{ReadOnly: true})
	if err != nil {
		return 0, files, err
	}
	defer s.Close()
	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	var l raft.Log
	for i := first; i <= last && i > 0; i++ {
		if err := s.GetLog(i, &l); err != nil {
			return payload, files, err
		}
		payload += int64(len(l.Data))
	}
	return payload, files, nil
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
	if err := m.WriteJSON(io.MultiWriter(&p, zw)); err != nil {
		return 0, 0, err
	}
	if err := zw.Close(); err != nil {
		return 0, 0, err
	}
	return p.n, g.n, nil
}
