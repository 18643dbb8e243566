package coordinator

import (
	"crypto/tls"
	"net/http"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
)

// RoundTiming is what one committed round cost the leader (see
// sweep.RoundTiming); Options.OnRound sees one per round.
type RoundTiming = sweep.RoundTiming

// workerTransport is the transport for worker API calls. One leader talks to
// every worker once per round, so an idle connection is kept per worker (a
// round must not pay a TCP handshake per task) and no more: the leader's
// descriptors then grow with the workers, not with the rounds
// (descriptorsNeeded), and connections to workers that left time out.
func workerTransport(rt http.RoundTripper, tc *tls.Config) http.RoundTripper {
	if rt != nil {
		return rt
	}
	return &http.Transport{MaxIdleConnsPerHost: 2, IdleConnTimeout: 2 * time.Minute, TLSClientConfig: tc}
}

// SnapshotNow asks raft for a snapshot at once (the scale harness measures
// its size and time); raft's own thresholds decide otherwise.
func (c *Coordinator) SnapshotNow() error { return c.raft.Snapshot().Error() }
