package coordinator

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// raftTimers: Fast shrinks timers for one-host runs (demo, tests) where a
// single voter should lead within milliseconds.
type raftTimers struct{ Fast bool }

// newRaft starts a raft node with the FSM. With dataDir empty everything is
// in memory (demo, tests); otherwise the log and stable store are bolt files
// and snapshots are files, so a restarted coordinator keeps its history.
func newRaft(name, dataDir string, f *fsm, notify chan bool, timers raftTimers, log *slog.Logger) (*raft.Raft, func() error, error) {
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(name)
	conf.Logger = hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn,
		Output: slogWriter{log.With("component", "raft")}})
	conf.NotifyCh = notify
	if timers.Fast {
		conf.HeartbeatTimeout = 100 * time.Millisecond
		conf.ElectionTimeout = 100 * time.Millisecond
		conf.LeaderLeaseTimeout = 50 * time.Millisecond
		conf.CommitTimeout = 5 * time.Millisecond
	}
	var (
		logs   raft.LogStore
		stable raft.StableStore
		snaps  raft.SnapshotStore
		closer = func() error { return nil }
	)
	if dataDir == "" {
		mem := raft.NewInmemStore()
		logs, stable, snaps = mem, mem, raft.NewInmemSnapshotStore()
	} else {
		if err := os.MkdirAll(dataDir, 0o750); err != nil {
			return nil, nil, fmt.Errorf("coordinator.data_dir %s: %w", dataDir, err)
		}
		bolt, err := raftboltdb.NewBoltStore(filepath.Join(dataDir, "raft.db"))
		if err != nil {
			return nil, nil, fmt.Errorf("coordinator.data_dir %s: open raft.db: %w", dataDir, err)
		}
		fs, err := raft.NewFileSnapshotStore(dataDir, 3, slogWriter{log.With("component", "raft-snapshots")})
		if err != nil {
			bolt.Close()
			return nil, nil, fmt.Errorf("coordinator.data_dir %s: snapshots: %w", dataDir, err)
		}
		logs, stable, snaps, closer = bolt, bolt, fs, bolt.Close
	}
	// A single voter needs no network: the in-memory transport has a stable
	// address (our name) so a restarted node finds itself in its own config.
	addr, trans := raft.NewInmemTransport(raft.ServerAddress(name))
	has, err := raft.HasExistingState(logs, stable, snaps)
	if err != nil {
		closer()
		return nil, nil, err
	}
	if !has {
		cfg := raft.Configuration{Servers: []raft.Server{{ID: conf.LocalID, Address: addr}}}
		if err := raft.BootstrapCluster(conf, logs, stable, snaps, trans, cfg); err != nil {
			closer()
			return nil, nil, fmt.Errorf("raft bootstrap: %w", err)
		}
	}
	r, err := raft.NewRaft(conf, f, logs, stable, snaps, trans)
	if err != nil {
		closer()
		return nil, nil, err
	}
	return r, closer, nil
}

// slogWriter carries hashicorp loggers' lines into slog.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	s := string(p)
	for len(s) > 0 && (s[len(s)-1] == '\n') {
		s = s[:len(s)-1]
	}
	w.l.Info(s)
	return len(p), nil
}
