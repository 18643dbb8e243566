// Package simworker adapts a sim.Node to worker.Fabric.
//
// It exists only because worker.Session is a defined type: Go matches method
// signatures by type identity, so sim.Node.Open, which cannot name
// worker.Session without importing worker, can never satisfy worker.Fabric
// on its own. Once the Session interface lives in internal/probe (with
// worker.Session an alias of it), sim.Node can return it directly and this
// package can go.
package simworker

import (
	"context"

	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/worker"
)

// New wraps n so a worker can use it.
func New(n *sim.Node) worker.Fabric { return fabric{n} }

type fabric struct{ n *sim.Node }

var _ worker.Fabric = fabric{}

func (f fabric) Name() string { return f.n.Name() }

func (f fabric) Ports(ctx context.Context) ([]probe.Port, error) { return f.n.Ports(ctx) }

func (f fabric) Open(ctx context.Context, ep probe.Endpoint, p probe.TestParams) (worker.Session, error) {
	s, err := f.n.Open(ctx, ep, p)
	if err != nil {
		return nil, err // not s: a nil *Session in a worker.Session would not compare equal to nil
	}
	return s, nil
}
