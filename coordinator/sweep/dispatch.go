package sweep

import (
	"context"
	"fmt"
	"slices"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// direction measures src → dst on every rail link the spec asks for, one
// task per rail phase, appending its cells to out. It always adds one cell
// per link: rails an end cannot test say why, the rest go to d.
func direction(ctx context.Context, d Dispatcher, out []matrix.Cell, id string, round int, spec *Spec, src, dst matrix.Node) []matrix.Cell {
	for _, phase := range RailPhases(*spec, src, dst) {
		var rails []probe.RailPair
		rails, out = splitUsable(out, src, dst, round, phase)
		if len(rails) == 0 {
			continue
		}
		out = d.Phase(ctx, out, Task{SweepID: id, Round: round, Spec: spec, Src: src, Dst: dst, Rails: rails})
	}
	return out
}

// splitUsable keeps the rails both ends can test. A port the worker's
// discovery marked unusable is not tested: its cells, appended to out, say
// why instead of turning into an opaque RDMA failure.
func splitUsable(out []matrix.Cell, src, dst matrix.Node, round int, rails []probe.RailPair) ([]probe.RailPair, []matrix.Cell) {
	i := slices.IndexFunc(rails, func(rp probe.RailPair) bool { return !usable(src, dst, rp) })
	if i < 0 {
		return rails, out // the usual case: nothing to copy
	}
	ok := slices.Clone(rails[:i])
	for _, rp := range rails[i:] {
		e := unusable(src, rp.Rail)
		if e == nil {
			e = unusable(dst, rp.Dst.Rail)
		}
		if e == nil {
			ok = append(ok, rp)
			continue
		}
		out = append(out, FailCells(src.Name, dst.Name, round, []probe.RailPair{rp}, e)...)
	}
	return ok, out
}

func usable(src, dst matrix.Node, rp probe.RailPair) bool {
	return src.Ports[rp.Rail].Usable && dst.Ports[rp.Dst.Rail].Usable
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
