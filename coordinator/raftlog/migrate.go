package raftlog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hashicorp/raft"
)

// migrateBatch bounds what one append of a migration holds.
const migrateBatch = 32 << 20

// Migrate makes dir a log holding src's entries (from its last gap on, see
// runEnding), unless dir exists already.
// It builds the log in dir+".partial" and renames it into place, so a crash
// part way leaves no half log under dir: the next start builds it again.
// It reports whether it copied anything; src is left as it was.
func Migrate(src raft.LogStore, dir string, o Options) (bool, error) {
	if _, err := os.Stat(dir); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("raftlog: %w", err)
	}
	first, err := src.FirstIndex()
	if err != nil {
		return false, fmt.Errorf("raftlog: migrate: first index: %w", err)
	}
	last, err := src.LastIndex()
	if err != nil {
		return false, fmt.Errorf("raftlog: migrate: last index: %w", err)
	}
	if last == 0 {
		return false, nil // a new replica: Open makes the directory
	}
	if first, err = runEnding(src, first, last); err != nil {
		return false, err
	}
	tmp := dir + ".partial"
	if err := os.RemoveAll(tmp); err != nil {
		return false, fmt.Errorf("raftlog: migrate: %w", err)
	}
	dst, err := Open(tmp, o)
	if err != nil {
		return false, err
	}
	if err := copyLog(dst, src, first, last); err != nil {
		dst.Close()
		return false, err
	}
	if err := dst.Close(); err != nil {
		return false, fmt.Errorf("raftlog: migrate: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return false, fmt.Errorf("raftlog: migrate: %w", err)
	}
	if err := SyncDir(filepath.Dir(dir)); err != nil {
		return false, fmt.Errorf("raftlog: migrate: %w", err)
	}
	return true, nil
}

// runEnding is where the run of entries without a gap that ends at last
// begins. raft-boltdb is not a MonotonicLogStore: a follower that installed
// a snapshot kept the entries below the snapshot's index and appended
// after it, so its log may have a gap until compaction passes it. What
// lies before the gap the snapshot holds; raft asks raftlog for no gaps.
func runEnding(src raft.LogStore, first, last uint64) (uint64, error) {
	var l raft.Log
	for i := last; i > first; i-- {
		err := src.GetLog(i-1, &l)
		if errors.Is(err, raft.ErrLogNotFound) {
			return i, nil
		}
		if err != nil {
			return 0, fmt.Errorf("raftlog: migrate: entry %d: %w", i-1, err)
		}
	}
	return first, nil
}

func copyLog(dst *Store, src raft.LogStore, first, last uint64) error {
	var batch []*raft.Log
	var size int
	flush := func() error {
		err := dst.StoreLogs(batch)
		batch, size = batch[:0], 0
		return err
	}
	for i := first; i <= last; i++ {
		l := new(raft.Log)
		if err := src.GetLog(i, l); err != nil {
			return fmt.Errorf("raftlog: migrate: entry %d of [%d, %d]: %w", i, first, last, err)
		}
		batch = append(batch, l)
		if size += len(l.Data); size >= migrateBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if len(batch) > 0 {
		return flush()
	}
	return nil
}
