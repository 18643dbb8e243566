package store

import (
	"slices"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// The store records internal/wire's types, the log's own, and converts at
// its boundary: matrix and sweep values in from the engine, out to the
// engine and the analysis. Nodes and cells are copied field by field, so
// a field the analysis adds stays out of the log until the log is given
// it on purpose (internal/wire, with a new version).

func nodesIn(ns []matrix.Node) []wire.Node {
	if ns == nil {
		return nil
	}
	out := make([]wire.Node, len(ns))
	for i, n := range ns {
		out[i] = wire.Node{Name: n.Name, State: n.State, Labels: n.Labels, Ports: withoutNeighbors(n.Ports)}
	}
	return out
}

// withoutNeighbors is ports without their LLDP neighbours: a sweep's
// record is in every start entry and snapshot, and a neighbour (with its
// reasons when unknown, ~350 bytes) is the live inventory's to report
// (GET /api/v1/nodes), not a measurement of the sweep.
func withoutNeighbors(ports []probe.Port) []probe.Port {
	if !slices.ContainsFunc(ports, func(p probe.Port) bool { return p.Neighbor != nil }) {
		return ports
	}
	out := slices.Clone(ports)
	for i := range out {
		out[i].Neighbor = nil
	}
	return out
}

func nodesOut(ns []wire.Node) []matrix.Node {
	if ns == nil {
		return nil
	}
	out := make([]matrix.Node, len(ns))
	for i, n := range ns {
		out[i] = matrix.Node{Name: n.Name, State: n.State, Labels: n.Labels, Ports: n.Ports}
	}
	return out
}

func cellIn(c *matrix.Cell) wire.Cell {
	return wire.Cell{Src: c.Src, Dst: c.Dst, Rail: c.Rail, DstRail: c.DstRail, SrcDevice: c.SrcDevice, DstDevice: c.DstDevice,
		Round: c.Round, Class: c.Class, Error: c.Error, Latency: c.Latency, Bandwidth: c.Bandwidth, Flow: c.Flow,
		BackFlow: c.BackFlow, Retests: attemptsIn(c.Retests)}
}

func cellOut(c *wire.Cell) matrix.Cell {
	return matrix.Cell{Src: c.Src, Dst: c.Dst, Rail: c.Rail, DstRail: c.DstRail, SrcDevice: c.SrcDevice, DstDevice: c.DstDevice,
		Round: c.Round, Class: c.Class, Error: c.Error, Latency: c.Latency, Bandwidth: c.Bandwidth, Flow: c.Flow,
		BackFlow: c.BackFlow, Retests: attemptsOut(c.Retests)}
}

func cellsOut(cs []wire.Cell) []matrix.Cell {
	out := make([]matrix.Cell, len(cs))
	for i := range cs {
		out[i] = cellOut(&cs[i])
	}
	return out
}

func attemptsIn(as []matrix.Attempt) []wire.Attempt {
	if as == nil {
		return nil
	}
	out := make([]wire.Attempt, len(as))
	for i, a := range as {
		out[i] = wire.Attempt{Round: a.Round, Class: a.Class, Error: a.Error, Latency: a.Latency, Bandwidth: a.Bandwidth}
	}
	return out
}

func attemptsOut(as []wire.Attempt) []matrix.Attempt {
	if as == nil {
		return nil
	}
	out := make([]matrix.Attempt, len(as))
	for i, a := range as {
		out[i] = matrix.Attempt{Round: a.Round, Class: a.Class, Error: a.Error, Latency: a.Latency, Bandwidth: a.Bandwidth}
	}
	return out
}

func planIn(p *sweep.RetestPlan) wire.RetestPlan {
	out := wire.RetestPlan{SweepID: p.SweepID, Pass: p.Pass, Pairs: p.Pairs}
	if p.Rounds != nil {
		out.Rounds = make([]wire.PlannedRound, len(p.Rounds))
	}
	for i, rd := range p.Rounds {
		out.Rounds[i] = wire.PlannedRound{Index: rd.Index, Bye: rd.Bye}
		if rd.Pairs != nil {
			out.Rounds[i].Pairs = make([]wire.Pair, len(rd.Pairs))
		}
		for j, pr := range rd.Pairs {
			out.Rounds[i].Pairs[j] = wire.Pair{A: pr.A, B: pr.B}
		}
	}
	return out
}

func planOut(p *wire.RetestPlan) sweep.RetestPlan {
	out := sweep.RetestPlan{SweepID: p.SweepID, Pass: p.Pass, Pairs: p.Pairs}
	if p.Rounds != nil {
		out.Rounds = make([]scheduler.Round, len(p.Rounds))
	}
	for i, rd := range p.Rounds {
		out.Rounds[i] = scheduler.Round{Index: rd.Index, Bye: rd.Bye}
		if rd.Pairs != nil {
			out.Rounds[i].Pairs = make([]scheduler.Pair, len(rd.Pairs))
		}
		for j, pr := range rd.Pairs {
			out.Rounds[i].Pairs[j] = scheduler.Pair{A: pr.A, B: pr.B}
		}
	}
	return out
}

// The spec converts as a whole: wire.Spec is sweep.Spec field for field.
func specIn(s sweep.Spec) wire.Spec  { return wire.Spec(s) }
func specOut(s wire.Spec) sweep.Spec { return sweep.Spec(s) }
