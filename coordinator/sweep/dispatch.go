package sweep

import (
	"context"
	"fmt"
	"slices"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// pairPhases measures a → b and b → a on every rail link the spec asks
// for, appending their cells to out. Phase i of both directions goes out
// as one task, so a pair costs one dispatch a phase rather than two. It
// always adds one cell per link: rails an end cannot test say why, the
// rest go to d.
//
// fig is room for the figures of the cells appended, one slot a rail
// link, in step with out's room; lite takes the phases' lite cells
// (Task.Lite), within the same room.
//
// steer, when not empty, limits the pair to its rails and gives each
// end's QPs their flow labels (a link sweep).
func pairPhases(ctx context.Context, d Dispatcher, sc *pairScratch, out []matrix.Cell, fig figRoom, lite *[]LiteCell, id string, round int, spec *Spec, pc *phaseCache, a, b *nodeRec, steer []scheduler.RailFlow) []matrix.Cell {
	// Both directions link the rails the two nodes share, so they have the
	// same phases, mirrored.
	fwd, rev := pc.phases(&sc.fwd, spec, a, b), pc.phases(&sc.rev, spec, b, a)
	if len(steer) > 0 {
		fwd, rev = steerPhases(fwd, steer, false), steerPhases(rev, steer, true)
	}
	for i := range fwd {
		var there, back []probe.RailPair
		there, out = splitUsable(out, a, b, round, fwd[i])
		if i < len(rev) {
			back, out = splitUsable(out, b, a, round, rev[i])
		}
		t := Task{SweepID: id, Round: round, Spec: spec, Src: a.Node, Dst: b.Node, SrcIndex: a.index, DstIndex: b.index, Rails: there, Reverse: back,
			Lite: lite}
		if len(there) == 0 {
			t.Src, t.Dst, t.SrcIndex, t.DstIndex, t.Rails, t.Reverse = b.Node, a.Node, b.index, a.index, back, nil
		}
		if len(t.Rails) == 0 {
			continue
		}
		// A slot a cell so far, lite or not: the cells of earlier phases
		// keep their figures below it.
		at := len(out) + len(*lite)
		if n := at + len(t.Rails) + len(t.Reverse); n <= len(fig.lats) {
			t.Figures, t.Codes = fig.lats[at:n:n], fig.codes[at:n:n]
		}
		out = d.Phase(ctx, out, t)
	}
	return out
}

// pairScratch is a pool goroutine's space for a pair's rail phases.
type pairScratch struct{ fwd, rev phaseBuf }

// splitUsable keeps the rails both ends can test. A port the worker's
// discovery marked unusable is not tested: its cells, appended to out, say
// why instead of turning into an opaque RDMA failure.
func splitUsable(out []matrix.Cell, src, dst *nodeRec, round int, rails []probe.RailPair) ([]probe.RailPair, []matrix.Cell) {
	i := slices.IndexFunc(rails, func(rp probe.RailPair) bool { return !src.usable[rp.Rail] || !dst.usable[rp.Dst.Rail] })
	if i < 0 {
		return rails, out // the usual case: nothing to copy
	}
	ok := slices.Clone(rails[:i])
	for _, rp := range rails[i:] {
		e := unusable(src.Node, rp.Rail)
		if e == nil {
			e = unusable(dst.Node, rp.Dst.Rail)
		}
		if e == nil {
			ok = append(ok, rp)
			continue
		}
		out = append(out, FailCells(src.Name, dst.Name, round, []probe.RailPair{rp}, e)...)
	}
	return ok, out
}

func unusable(n matrix.Node, rail int) *probe.Error {
	p := n.Ports[rail]
	if p.Usable {
		return nil
	}
	class := probe.ClassSkipped
	if p.State != "" && p.State != "ACTIVE" {
		class = probe.ClassPortDown
	}
	e := &probe.Error{Class: class, Cause: fmt.Sprintf("not tested: %s %s port %d is unusable: %s", n.Name, p.Device, p.Port, p.UnusableWhy)}
	for _, c := range p.FailedChecks {
		if c.Status == "fail" && c.Fix != "" {
			e.Fix = c.Fix
			break
		}
	}
	if e.Fix == "" {
		e.Fix = fmt.Sprintf("run `rdmamesh doctor` on %s", n.Name)
	}
	return e
}

// steerPhases is phases restricted to the steered rails, each end's
// endpoint carrying its flow label; reverse: the phases run B → A. It
// copies: the phases may be shared by every pair with the same layouts.
func steerPhases(phases [][]probe.RailPair, steer []scheduler.RailFlow, reverse bool) [][]probe.RailPair {
	out := make([][]probe.RailPair, 0, len(phases))
	for _, ph := range phases {
		var keep []probe.RailPair
		for _, rp := range ph {
			i := slices.IndexFunc(steer, func(rf scheduler.RailFlow) bool { return rf.Rail == rp.Rail })
			if i < 0 {
				continue
			}
			src, dst := steer[i].A, steer[i].B
			if reverse {
				src, dst = dst, src
			}
			rp.Src.FlowLabel, rp.Dst.FlowLabel = src, dst
			keep = append(keep, rp)
		}
		if len(keep) > 0 {
			out = append(out, keep)
		}
	}
	return out
}
