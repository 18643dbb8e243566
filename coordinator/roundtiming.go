package coordinator

import (
	"crypto/tls"
	"net/http"
	"time"
)

// RoundTiming is what one committed round cost the leader. Dispatch is from
// the first task sent to the last answer in; Commit is encoding the round's
// raft entry plus raft.Apply until the FSM applied it, which overlaps the
// next round's dispatch (pipeline.go); Stall is how long that next round
// could not start because this commit was still running.
type RoundTiming struct {
	SweepID  string
	Round    int
	Cells    int
	Dispatch time.Duration
	Commit   time.Duration
	Stall    time.Duration
	Bytes    int // the raft entry's size
}

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
