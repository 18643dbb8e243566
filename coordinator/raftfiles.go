package coordinator

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"

	"github.com/rdmamesh/rdmamesh/coordinator/raftlog"
)

// openLogStores opens raft.db, which keeps the term and vote (a few bytes,
// rarely written), and raft's log in raft-log/ (raftlog: one sync an
// append instead of bbolt's two), moving an older data_dir's log out of
// raft.db first.
func openLogStores(dataDir string, log *slog.Logger) (*raftboltdb.BoltStore, *raftlog.Store, error) {
	path, dir := filepath.Join(dataDir, "raft.db"), filepath.Join(dataDir, "raft-log")
	bolt, err := raftboltdb.New(raftboltdb.Options{Path: path})
	if err != nil {
		return nil, nil, fmt.Errorf("open raft.db: %w", err)
	}
	// moveLog closes raft.db when it fails or rewrites it.
	if rewrote, err := moveLog(bolt, path, dir, log); err != nil {
		return nil, nil, err
	} else if rewrote {
		if bolt, err = raftboltdb.New(raftboltdb.Options{Path: path}); err != nil {
			return nil, nil, fmt.Errorf("open raft.db: %w", err)
		}
	}
	logs, err := raftlog.Open(dir, raftlog.Options{Log: log.With("component", "raft")})
	if err != nil {
		bolt.Close()
		return nil, nil, err
	}
	return bolt, logs, nil
}

// moveLog moves into dir the log of a raft.db written by an older version
// that kept the log in bolt: copied once (raftlog.Migrate builds it aside
// and renames it into place), then raft.db rewritten without it, since
// bbolt never shrinks a file and the log is most of it (400 MB after one
// 4,096-node sweep). A crash
// between the steps only repeats the later ones. A raft.db without a log
// (every start after the move, and a new replica) is left open as it is.
func moveLog(bolt *raftboltdb.BoltStore, path, dir string, log *slog.Logger) (rewrote bool, err error) {
	defer func() {
		if err != nil && !rewrote {
			bolt.Close()
		}
	}()
	first, err := bolt.FirstIndex()
	if err != nil {
		return false, fmt.Errorf("raft.db: %w", err)
	}
	last, err := bolt.LastIndex()
	if err != nil {
		return false, fmt.Errorf("raft.db: %w", err)
	}
	if last == 0 {
		return false, nil
	}
	if err := olderRanSince(dir, bolt, last); err != nil {
		return false, err
	}
	moved, err := raftlog.Migrate(bolt, dir, raftlog.Options{})
	if err != nil {
		return false, err
	}
	if moved {
		log.Info("moved the raft log out of raft.db", "dir", dir, "raft_db_first", first, "last", last)
	}
	if err := bolt.Close(); err != nil {
		return true, fmt.Errorf("raft.db: %w", err)
	}
	return true, rewriteWithoutLog(path)
}

// olderRanSince refuses a raft.db whose log is not the one already in dir:
// an older rdmamesh, which keeps its log in raft.db, ran on this data_dir
// after the move. Its entries and raft.db's term and vote belong together
// and the log in dir is stale; rewriting raft.db as after a crash mid-move
// would throw the newer entries away. After that crash raft.db's last
// entry is in dir as it is in raft.db, which is what tells the two apart.
func olderRanSince(dir string, bolt raft.LogStore, boltLast uint64) error {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	rl, err := raftlog.Open(dir, raftlog.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer rl.Close()
	var want, got raft.Log
	if err := bolt.GetLog(boltLast, &want); err != nil {
		return fmt.Errorf("raft.db: entry %d: %w", boltLast, err)
	}
	err = rl.GetLog(boltLast, &got)
	if err == nil && got.Term == want.Term && bytes.Equal(got.Data, want.Data) {
		return nil
	}
	if err != nil && !errors.Is(err, raft.ErrLogNotFound) {
		return err
	}
	return fmt.Errorf("raft.db's last log entry (index %d, term %d) is not the one %s holds: an older rdmamesh ran on this data_dir after the log was moved out of raft.db; see \"An older version ran on a moved data_dir\" in docs/operations.md",
		boltLast, want.Term, dir)
}

// rewriteWithoutLog copies every bucket of raft.db but raft-boltdb's log
// into a new file and renames it over raft.db.
func rewriteWithoutLog(path string) error {
	tmp := path + ".rewrite"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("raft.db: %w", err)
	}
	src, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("raft.db: %w", err)
	}
	defer src.Close()
	dst, err := bbolt.Open(tmp, 0o600, nil)
	if err != nil {
		return fmt.Errorf("raft.db: %w", err)
	}
	err = src.View(func(stx *bbolt.Tx) error {
		return dst.Update(func(dtx *bbolt.Tx) error {
			return stx.ForEach(func(name []byte, b *bbolt.Bucket) error {
				if string(name) == "logs" {
					return nil
				}
				nb, err := dtx.CreateBucket(name)
				if err != nil {
					return err
				}
				// raft-boltdb's buckets hold values only, no nested buckets.
				return b.ForEach(func(k, v []byte) error { return nb.Put(k, v) })
			})
		})
	})
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = raftlog.SyncDir(filepath.Dir(path))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("raft.db: rewrite without the moved log (a restart tries again): %w", err)
	}
	return nil
}
