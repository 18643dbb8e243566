// Package fabric is the seam between the worker and RDMA: the interfaces a
// provider implements. internal/fabric/verbs implements them on real HCAs
// through libibverbs, internal/fabric/sim in pure Go; neither imports the
// worker, and the worker imports neither.
package fabric

import (
	"context"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// Fabric is one node's RDMA: its ports and the tests it can open on them.
// Errors returned by every method are *probe.Error, classified where they
// happen.
type Fabric interface {
	// Name is "verbs" or "sim"; it is published in the inventory.
	Name() string
	// Ports lists the local HCA ports in rail order.
	Ports(ctx context.Context) ([]probe.Port, error)
	// Open builds the local half of a test (PD, MR, CQ, QP in INIT) on ep.
	Open(ctx context.Context, ep probe.Endpoint, p probe.TestParams) (Session, error)
}

// Session is one RC QP with its buffers, owned by exactly one goroutine.
type Session interface {
	// Info is the local QP info to hand to the peer.
	Info() probe.QPInfo
	// Connect moves the QP through RTR to RTS against the peer's info.
	Connect(ctx context.Context, remote probe.QPInfo) error
	// Latency runs the initiator side of the write ping-pong; one-way = RTT/2.
	Latency(ctx context.Context, p probe.TestParams) (probe.Latency, error)
	// Bandwidth streams RDMA WRITEs to the peer.
	Bandwidth(ctx context.Context, p probe.TestParams) (probe.Bandwidth, error)
	// Respond runs the responder side of the ping-pong until the initiator is
	// done or ctx ends.
	Respond(ctx context.Context, p probe.TestParams) error
	// Close frees every verbs object; safe to call more than once.
	Close() error
}

// Provider is a Fabric whose Open returns its own concrete session type, so
// a provider package need not import this one; Adapt turns it into a Fabric.
type Provider[S Session] interface {
	Name() string
	Ports(ctx context.Context) ([]probe.Port, error)
	Open(ctx context.Context, ep probe.Endpoint, p probe.TestParams) (S, error)
}

// Adapt wraps a Provider as a Fabric.
func Adapt[S Session](p Provider[S]) Fabric { return adapted[S]{p} }

type adapted[S Session] struct{ p Provider[S] }

func (a adapted[S]) Name() string { return a.p.Name() }

func (a adapted[S]) Ports(ctx context.Context) ([]probe.Port, error) { return a.p.Ports(ctx) }

func (a adapted[S]) Open(ctx context.Context, ep probe.Endpoint, p probe.TestParams) (Session, error) {
	s, err := a.p.Open(ctx, ep, p)
	if err != nil {
		// A typed nil inside a non-nil interface would fool callers' nil checks.
		return nil, err
	}
	return s, nil
}

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

// ReadSession is a Session that can also measure RDMA READ latency (like
// ib_read_lat). It is optional: a fabric without it leaves a cell's
// read_latency empty when the test asks for one.
type ReadSession interface {
	Session
	ReadLatency(ctx context.Context, p probe.TestParams) (probe.Latency, error)
}

// unwrap gives ProberOf the provider behind the adapter.
func (a adapted[S]) unwrap() any { return a.p }
