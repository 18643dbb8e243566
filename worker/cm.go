package worker

import (
	"context"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// listenCM is the responder's RDMA CM half before the reply: the reply's
// QP info and the accept step the responder goroutine runs.
func listenCM(ctx context.Context, sess fabric.Session, req probe.SessionRequest) (probe.QPInfo, func(context.Context) error, error) {
	cs, ok := sess.(fabric.CMSession)
	if !ok {
		return probe.QPInfo{}, nil, &probe.Error{Class: probe.ClassInternal,
			Cause: "this worker's fabric cannot connect through RDMA CM",
			Fix:   "run the sweep with connect=exchange, or use the verbs fabric on this node"}
	}
	info, err := cs.Listen(ctx)
	if err != nil {
		return probe.QPInfo{}, nil, err
	}
	return info, func(ctx context.Context) error { return cs.Accept(ctx, req.Initiator) }, nil
}
