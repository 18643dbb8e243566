package worker

import (
	"context"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// readLatency measures READ latency when the test asks for it and the
// session can; (nil, nil) otherwise.
func readLatency(ctx context.Context, sess fabric.Session, p probe.TestParams) (*probe.Latency, error) {
	rs, ok := sess.(fabric.ReadSession)
	if p.ReadIters == 0 || !ok {
		return nil, nil
	}
	l, err := rs.ReadLatency(ctx, p)
	if err != nil {
		return nil, err
	}
	return &l, nil
}
