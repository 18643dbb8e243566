// Package raftlog is the coordinator's raft log store: entries appended to
// zero-filled segment files, one disk sync per StoreLogs.
//
// raft-boltdb syncs twice a commit (bbolt's pages, then its meta page) and
// rewrites B+tree pages around every entry; the leader commits once a sweep
// round, and storing a round's entry (25 KB at 1,024 nodes) and syncing it
// takes about 0.5 ms in raft.db against raftlog's 0.17
// (BenchmarkRaftLogStore in package coordinator), and bbolt's map of its
// file adds the log's size to the RSS. hashicorp/raft-wal does this job,
// but the one release the module proxy serves (v0.4.0) cannot reopen a log
// after raft cuts its tail (hashicorp/raft-wal#31, fixed after the tag),
// and raft cuts a follower's tail after every contested election.
//
// The log is what raft asks of a MonotonicLogStore: one run of entries
// without gaps, cut only at its head (compaction) or its tail (a
// follower's uncommitted suffix).
package raftlog

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/hashicorp/raft"
)

// DefaultSegmentBytes is what each segment file is filled to before its
// entries go in: a few hundred rounds of a 4,096-node sweep, so that
// compaction frees space by whole files.
const DefaultSegmentBytes = 64 << 20

// Options tune a Store; the zero value is the product's.
type Options struct {
	SegmentBytes int64 // 0: DefaultSegmentBytes
	// ReadOnly opens an existing log to read it (tools, the bench's
	// measurements) without clearing a torn tail or writing anything.
	ReadOnly bool
	// Log, if set, hears of a torn append cut off at Open.
	Log *slog.Logger
}

// Store is a raft.LogStore and raft.MonotonicLogStore.
type Store struct {
	dir     string
	segSize int64

	// wmu serialises the writers (StoreLogs, DeleteRange, Close) and
	// guards buf and broken. An append holds it through its write and
	// sync but takes mu only to publish the new offsets: it writes past
	// every offset a reader can reach, so raft's replication reads go on
	// during the leader's sync.
	wmu    sync.Mutex
	buf    []byte
	broken error // set when a write, sync or cut fails (see StoreLogs)

	mu    sync.RWMutex
	segs  []*segment // ascending, contiguous, none empty
	first uint64     // raft's first index; may lie past segs[0].base
}

var (
	_ raft.LogStore          = (*Store)(nil)
	_ raft.MonotonicLogStore = (*Store)(nil)
)

// Open opens (or creates) the log in dir. A frame torn by a crash at the
// end of the newest segment is an append whose sync never returned: the
// file is cut after the last whole frame before anything is appended.
func Open(dir string, o Options) (*Store, error) {
	s := &Store{dir: dir, segSize: o.SegmentBytes}
	if s.segSize <= 0 {
		s.segSize = DefaultSegmentBytes
	}
	if o.ReadOnly {
		s.broken = errors.New("raftlog: opened read-only")
	} else if err := makeDir(dir); err != nil {
		return nil, fmt.Errorf("raftlog: %w", err)
	}
	segs, err := load(dir, o.ReadOnly, o.Log)
	if err != nil {
		return nil, err
	}
	s.segs = segs
	if len(segs) > 0 {
		s.first = segs[0].base
	}
	if o.ReadOnly {
		return s, nil
	}
	if n := len(segs); n > 0 {
		tail := segs[n-1]
		warnTorn(o.Log, tail)
		if err := s.clearAfter(tail); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := SyncDir(dir); err != nil {
		s.Close()
		return nil, fmt.Errorf("raftlog: %w", err)
	}
	return s, nil
}

// warnTorn logs what Open cuts off the newest segment when it is more
// than the zero fill: a torn append, or damage that takes acknowledged
// entries with it, which only the warning tells apart afterwards.
func warnTorn(log *slog.Logger, seg *segment) {
	if !seg.torn || log == nil {
		return
	}
	kept := "none"
	if seg.count() > 0 {
		kept = fmt.Sprint(seg.last())
	}
	log.Warn("raft log: cut the newest segment after its last whole entry: what followed was an append a crash interrupted, or damage",
		"segment", seg.path, "last_kept", kept, "bytes_cut_from", seg.end)
}

// damaged ends every refusal to open or read a damaged log.
const damaged = "the raft log in %s is damaged: see \"A damaged raft log\" in docs/operations.md"

// makeDir creates dir, durably: a new replica's first entries are only
// as safe as the directory entry that leads to them.
func makeDir(dir string) error {
	if _, err := os.Stat(dir); err == nil || !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(dir))
}

// load opens dir's segments, oldest first: every one holds entries and
// each starts where the one before ends. A newest segment without entries
// (created, then the process stopped) is removed.
func load(dir string, readOnly bool, log *slog.Logger) (segs []*segment, err error) {
	defer func() {
		if err != nil {
			for _, seg := range segs {
				seg.f.Close()
			}
		}
	}()
	names, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("raftlog: %w", err)
	}
	var bases []uint64
	for _, e := range names {
		if b, ok := parseSegName(e.Name()); ok && e.Type().IsRegular() {
			bases = append(bases, b)
		}
	}
	slices.Sort(bases)
	for i, b := range bases {
		newest := i == len(bases)-1
		seg, err := openSegment(filepath.Join(dir, segName(b)), b, newest, readOnly)
		if err != nil {
			return segs, fmt.Errorf("raftlog: %w; "+damaged, err, dir)
		}
		if seg.count() == 0 {
			seg.f.Close()
			switch {
			case !newest:
				return segs, fmt.Errorf("raftlog: %s holds no entries but is not the newest segment; "+damaged, seg.path, dir)
			case readOnly:
			default:
				warnTorn(log, seg)
				if err := os.Remove(seg.path); err != nil {
					return segs, fmt.Errorf("raftlog: %w", err)
				}
			}
			continue
		}
		if n := len(segs); n > 0 && segs[n-1].last()+1 != b {
			seg.f.Close()
			return segs, fmt.Errorf("raftlog: %s ends at entry %d but %s starts at %d, a gap; "+damaged,
				filepath.Base(segs[n-1].path), segs[n-1].last(), segName(b), b, dir)
		}
		segs = append(segs, seg)
	}
	return segs, nil
}

// IsMonotonic tells raft that the log has no gaps: after restoring a
// snapshot raft removes the old entries instead of leaving a gap.
func (s *Store) IsMonotonic() bool { return true }

// FirstIndex is the first entry's index, 0 when the log is empty.
func (s *Store) FirstIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.segs) == 0 {
		return 0, nil
	}
	return s.first, nil
}

// LastIndex is the last entry's index, 0 when the log is empty.
func (s *Store) LastIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.lastLocked(), nil
}

func (s *Store) lastLocked() uint64 {
	if len(s.segs) == 0 {
		return 0
	}
	return s.segs[len(s.segs)-1].last()
}

// GetLog reads entry index into l; raft.ErrLogNotFound outside the log.
func (s *Store) GetLog(index uint64, l *raft.Log) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.segs) == 0 || index < s.first || index > s.lastLocked() {
		return raft.ErrLogNotFound
	}
	i := sort.Search(len(s.segs), func(i int) bool { return s.segs[i].base > index }) - 1
	if i < 0 || index > s.segs[i].last() {
		return raft.ErrLogNotFound // segs and first disagree only if a cut failed
	}
	return s.segs[i].read(index, l)
}

// StoreLog appends one entry.
func (s *Store) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

// StoreLogs appends entries that follow the log's last one, with one write
// and one sync.
func (s *Store) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.broken != nil {
		return s.broken
	}
	// Only writers change segs, and they hold wmu: reading it here
	// needs no mu.
	if last := s.lastLocked(); last != 0 && logs[0].Index != last+1 {
		return fmt.Errorf("raftlog: entry %d does not follow the log's last entry %d", logs[0].Index, last)
	}
	b := s.buf[:0]
	ends := make([]int64, 0, len(logs))
	for i, l := range logs {
		if l.Index != logs[0].Index+uint64(i) {
			return fmt.Errorf("raftlog: entries %d and %d of one append are not consecutive", logs[i-1].Index, l.Index)
		}
		b = appendFrame(b, l)
		ends = append(ends, int64(len(b)))
	}
	s.buf = b
	tail, fresh, err := s.tailFor(logs[0].Index, int64(len(b)))
	if err != nil {
		return err
	}
	if _, err := tail.f.WriteAt(b, tail.end); err != nil {
		// Part of b may be in the file, and a shorter append over it
		// would leave whole old frames after its own. Open cuts what
		// follows the last whole frame, so a restart is the way on.
		s.broken = fmt.Errorf("raftlog: append to %s: %w; the log takes no more writes until this coordinator restarts", filepath.Base(tail.path), err)
		return s.broken
	}
	if err := datasync(tail.f); err != nil {
		// After a failed fsync what is on disk is unknown: the kernel
		// may have dropped the pages it could not write.
		s.broken = fmt.Errorf("raftlog: sync %s: %w; the log takes no more writes until this coordinator restarts", filepath.Base(tail.path), err)
		return s.broken
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if fresh {
		if len(s.segs) == 0 {
			s.first = logs[0].Index
		}
		s.segs = append(s.segs, tail)
	}
	start := int64(0)
	for _, e := range ends {
		tail.offs = append(tail.offs, tail.end+start)
		start = e
	}
	tail.end += start
	return nil
}

// tailFor is the segment an append of n bytes starting at entry index goes
// to: the newest, unless it is full, or a new one (fresh), which the
// caller publishes once its first entries are synced.
func (s *Store) tailFor(index uint64, n int64) (seg *segment, fresh bool, err error) {
	if k := len(s.segs); k > 0 {
		if t := s.segs[k-1]; t.end+n <= s.segSize {
			return t, false, nil
		}
	}
	seg = &segment{base: index, path: filepath.Join(s.dir, segName(index)), end: headLen}
	f, err := os.OpenFile(seg.path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return nil, false, fmt.Errorf("raftlog: %w", err)
	}
	seg.f = f
	_, err = f.WriteAt(appendHead(nil, index), 0)
	if err == nil {
		err = zeroFill(f, headLen, max(s.segSize, headLen+n)-headLen)
	}
	if err == nil {
		// The new file's name must survive a crash before the entries
		// synced in it are acknowledged.
		err = SyncDir(s.dir)
	}
	if err != nil {
		f.Close()
		os.Remove(seg.path)
		return nil, false, fmt.Errorf("raftlog: new segment %s: %w", filepath.Base(seg.path), err)
	}
	return seg, true, nil
}

// DeleteRange removes entries lo..hi, which must take the log's head
// (compaction) or its tail (a follower's overridden suffix) or all of it.
func (s *Store) DeleteRange(lo, hi uint64) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return s.broken
	}
	last := s.lastLocked()
	if len(s.segs) == 0 || hi < s.first || lo > last || lo > hi {
		return nil
	}
	switch {
	case lo <= s.first:
		return s.cutHead(hi)
	case hi >= last:
		return s.cutTail(lo)
	}
	return fmt.Errorf("raftlog: DeleteRange(%d, %d) lies inside the log [%d, %d]: raft only removes a head or a tail", lo, hi, s.first, last)
}

// cutHead drops entries up to hi: whole segments go, and within the
// segment that keeps the rest only the first index moves. After a restart
// that segment's earlier entries are readable again; they are committed
// entries raft already snapshotted, so serving them is harmless.
func (s *Store) cutHead(hi uint64) error {
	n := 0
	for n < len(s.segs) && s.segs[n].last() <= hi {
		n++
	}
	err := s.unlink(s.segs[:n])
	s.segs = s.segs[n:]
	switch {
	case len(s.segs) == 0:
		s.first = 0
	default:
		s.first = max(hi+1, s.segs[0].base)
	}
	return err
}

// cutTail drops entries from lo on: newest segments first, so that a
// crash part way leaves the log a prefix of itself.
func (s *Store) cutTail(lo uint64) error {
	k := len(s.segs)
	for k > 0 && s.segs[k-1].base >= lo {
		k--
	}
	gone := slices.Clone(s.segs[k:])
	slices.Reverse(gone)
	s.segs = s.segs[:k]
	if len(s.segs) == 0 {
		s.first = 0
	}
	if err := s.unlink(gone); err != nil || len(s.segs) == 0 {
		return err
	}
	seg := s.segs[len(s.segs)-1]
	if lo > seg.last() {
		return nil
	}
	seg.end = seg.offs[lo-seg.base]
	seg.offs = seg.offs[:lo-seg.base]
	return s.clearAfter(seg)
}

// unlink closes and removes segs' files in the order given, then makes
// the removals durable; the caller has taken them out of s.segs.
func (s *Store) unlink(segs []*segment) error {
	for i, seg := range segs {
		seg.f.Close()
		if err := os.Remove(seg.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			for _, rest := range segs[i+1:] {
				rest.f.Close() // out of s.segs already: Close would not reach them
			}
			s.broken = fmt.Errorf("raftlog: %w; the log takes no more writes until this coordinator restarts", err)
			return s.broken
		}
	}
	if err := SyncDir(s.dir); err != nil {
		s.broken = fmt.Errorf("raftlog: %w; the log takes no more writes until this coordinator restarts", err)
		return s.broken
	}
	return nil
}

// clearAfter cuts seg's file at its last entry, so that no old frame past
// it can pass for a later entry once new ones are appended up to it. The
// segment's later appends grow the file (a slower sync, as zeroFill says)
// until the next segment: refilling it would write tens of MB at every
// start.
func (s *Store) clearAfter(seg *segment) error {
	err := seg.f.Truncate(seg.end)
	if err == nil {
		err = datasync(seg.f)
	}
	if err != nil {
		s.broken = fmt.Errorf("raftlog: cut %s after its last entry: %w; the log takes no more writes until this coordinator restarts", filepath.Base(seg.path), err)
		return s.broken
	}
	return nil
}

// Close closes the segment files; the store is unusable after it.
func (s *Store) Close() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, seg := range s.segs {
		errs = append(errs, seg.f.Close())
	}
	s.segs = nil
	s.broken = errors.New("raftlog: closed")
	return errors.Join(errs...)
}

// SyncDir makes the creation, removal and renaming of dir's entries
// durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
