package worker

import (
	"context"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// ReadSession is a Session that can also measure RDMA READ latency (like
// ib_read_lat). It is optional: a fabric without it leaves a cell's
// read_latency empty when the test asks for one.
type ReadSession interface {
	Session
	ReadLatency(ctx context.Context, p probe.TestParams) (probe.Latency, error)
}

// readLatency measures READ latency when the test asks for it and the
// session can; (nil, nil) otherwise.
func readLatency(ctx context.Context, sess Session, p probe.TestParams) (*probe.Latency, error) {
	rs, ok := sess.(ReadSession)
	if p.ReadIters == 0 || !ok {
		return nil, nil
	}
	l, err := rs.ReadLatency(ctx, p)
	if err != nil {
		return nil, err
	}
	return &l, nil
}
