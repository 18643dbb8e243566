package coordinator

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/coordinator/store"
	"github.com/rdmamesh/rdmamesh/internal/member"
)

// raftNet says how replicas reach each other. With no Bind and no
// Transport the node is a single voter on an in-memory transport (demo,
// tests, a one-coordinator install): no port, no network.
type raftNet struct {
	Bind      string         // host:port for the raft TCP transport
	Advertise string         // host:port others dial; empty = Bind
	Transport raft.Transport // tests: an in-memory transport wired to peers
	Fast      bool           // one-host timers (demo, tests)
	Timeout   time.Duration  // heartbeat and election timeout; 0 = raft's default
	TLS       *tls.Config    // with Bind: serve raft over TLS (raft_tls.go)
	ClientTLS *tls.Config    // and dial peers with this
}

// newRaft starts a raft node with the FSM. With dataDir empty everything is
// in memory; otherwise the log is raftlog's segments, the term and vote a
// bolt file and snapshots files, so a restarted coordinator keeps its
// history. It does not bootstrap: see (*Coordinator).bootstrap.
func newRaft(name, dataDir string, f *store.FSM, notify chan bool, n raftNet, log *slog.Logger) (*raft.Raft, raft.Transport, *raftStores, error) {
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(name)
	conf.Logger = newRaftLogger(log)
	conf.NotifyCh = notify
	if n.Timeout > 0 {
		// A follower only votes once its own heartbeat timer has fired, so
		// failover is about two to four timeouts: raft's 1s default gave
		// up to 5.5s in make chaos. The lease stays at the timeout rather
		// than raft's half, so a briefly stalled leader keeps its place.
		conf.HeartbeatTimeout = n.Timeout
		conf.ElectionTimeout = n.Timeout
		conf.LeaderLeaseTimeout = n.Timeout
	}
	if n.Fast {
		conf.HeartbeatTimeout = 200 * time.Millisecond
		conf.ElectionTimeout = 200 * time.Millisecond
		conf.LeaderLeaseTimeout = 100 * time.Millisecond
		conf.CommitTimeout = 5 * time.Millisecond
	}
	st, err := openStores(dataDir, log)
	if err != nil {
		return nil, nil, nil, err
	}
	trans := n.Transport
	switch {
	case trans != nil:
	case n.Bind == "":
		// A stable address (our name) lets a restarted single voter find
		// itself in its own configuration.
		_, trans = raft.NewInmemTransport(raft.ServerAddress(name))
	case n.TLS != nil:
		if trans, err = newTLSTransport(n, conf.Logger); err != nil {
			return nil, nil, nil, errors.Join(err, st.close())
		}
	default:
		adv, err := resolveAdvertise(n.Bind, n.Advertise)
		if err != nil {
			return nil, nil, nil, errors.Join(err, st.close())
		}
		trans, err = raft.NewTCPTransportWithLogger(n.Bind, adv, 5, 10*time.Second, conf.Logger)
		if err != nil {
			return nil, nil, nil, errors.Join(fmt.Errorf("coordinator.raft_bind %s: %w", n.Bind, err), st.close())
		}
	}
	r, err := raft.NewRaft(conf, f, st.logs, st.stable, st.snaps, trans)
	if err != nil {
		return nil, nil, nil, errors.Join(err, st.close())
	}
	return r, trans, st, nil
}

type raftStores struct {
	logs   raft.LogStore
	stable raft.StableStore
	snaps  raft.SnapshotStore
	close  func() error
}

func openStores(dataDir string, log *slog.Logger) (*raftStores, error) {
	if dataDir == "" {
		mem := raft.NewInmemStore()
		return &raftStores{mem, mem, raft.NewInmemSnapshotStore(), func() error { return nil }}, nil
	}
	if err := os.MkdirAll(dataDir, 0o750); err != nil {
		return nil, fmt.Errorf("coordinator.data_dir %s: %w", dataDir, err)
	}
	bolt, logs, err := openLogStores(dataDir, log)
	if err != nil {
		return nil, fmt.Errorf("coordinator.data_dir %s: %w", dataDir, err)
	}
	fs, err := raft.NewFileSnapshotStore(dataDir, 3, member.LogWriter(log.With("component", "raft-snapshots"), slog.LevelInfo))
	if err != nil {
		logs.Close()
		bolt.Close()
		return nil, fmt.Errorf("coordinator.data_dir %s: snapshots: %w", dataDir, err)
	}
	if err := dropLogBelowSnapshot(logs, fs); err != nil {
		logs.Close()
		bolt.Close()
		return nil, fmt.Errorf("coordinator.data_dir %s: %w", dataDir, err)
	}
	return &raftStores{logs, bolt, fs, func() error { return errors.Join(logs.Close(), bolt.Close()) }}, nil
}

// dropLogBelowSnapshot empties a log that ends below the newest snapshot,
// as raft's removeOldLogs does when it installs one: raft.db's log could
// be left so (a follower that installed a snapshot and stopped before an
// entry followed it), and raftlog takes no entry after a gap, so the
// leader's next entry would be refused until it had stepped back through
// its whole kept log and sent the snapshot again. The snapshot holds every
// entry dropped.
func dropLogBelowSnapshot(logs raft.LogStore, snaps raft.SnapshotStore) error {
	metas, err := snaps.List()
	if err != nil || len(metas) == 0 {
		return err
	}
	last, err := logs.LastIndex()
	if err != nil || last == 0 || last >= metas[0].Index {
		return err
	}
	first, err := logs.FirstIndex()
	if err != nil {
		return err
	}
	return logs.DeleteRange(first, last)
}

func (s *raftStores) hasState() (bool, error) {
	return raft.HasExistingState(s.logs, s.stable, s.snaps)
}

// resolveAdvertise turns the advertise address into the TCPAddr raft wants;
// an unspecified bind host cannot be dialled, so it needs an advertise.
func resolveAdvertise(bind, adv string) (net.Addr, error) {
	if adv == "" {
		host, _, err := net.SplitHostPort(bind)
		if err != nil {
			return nil, fmt.Errorf("coordinator.raft_bind %q: %w", bind, err)
		}
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			return nil, fmt.Errorf("coordinator.raft_bind %q listens on all interfaces: set coordinator.raft_advertise to the address peers dial", bind)
		}
		adv = bind
	}
	a, err := net.ResolveTCPAddr("tcp", adv)
	if err != nil {
		return nil, fmt.Errorf("coordinator.raft_advertise %q: %w", adv, err)
	}
	return a, nil
}

// SnapshotNow asks raft for a snapshot at once (the scale harness measures
// its size and time); raft's own thresholds decide otherwise.
func (c *Coordinator) SnapshotNow() error { return c.raft.Snapshot().Error() }
