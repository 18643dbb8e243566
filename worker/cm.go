package worker

import (
	"context"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// CMSession is a Session that can connect through RDMA CM (TestParams
// Connect = "rdmacm"). The initiator needs nothing extra: its Connect sees
// the mode in the session's parameters and uses the responder's CMAddr.
// The responder splits in two: Listen before the reply (the address goes
// back in it), Accept after, in the responder goroutine.
type CMSession interface {
	Session
	// Listen starts listening for the initiator's connect request and
	// returns the local QP info with CMAddr set.
	Listen(ctx context.Context) (probe.QPInfo, error)
	// Accept waits for the request, checks it, and completes the connection.
	Accept(ctx context.Context, remote probe.QPInfo) error
}

// listenCM is the responder's RDMA CM half before the reply: the reply's
// QP info and the accept step the responder goroutine runs.
func listenCM(ctx context.Context, sess Session, req probe.SessionRequest) (probe.QPInfo, func(context.Context) error, error) {
	cs, ok := sess.(CMSession)
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
