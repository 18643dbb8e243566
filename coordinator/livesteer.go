package coordinator

import (
	"context"
	"slices"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/linkplan"
	"github.com/rdmamesh/rdmamesh/internal/liveplan"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/topology"
)

// The live link flows are planned, as a link sweep's tests are, by the
// topology's model of the switches' ECMP hash; a real fabric hashes with
// its own (Linux with a seed drawn at boot). Where the switches answer
// traces, the leader traces each flow's candidate labels both ways (the
// probe from its source, the answer from its target with the same label),
// keeps the first candidate that leaves and enters the leaves over the
// cables the plan meant, and routes the flow's probes over what was traced
// from then on. A flow whose traces do not map onto the topology keeps the
// plan's label and the model's route.

// liveFlow keys a steered flow's traced cables.
type liveFlow struct {
	src, dst string
	rail     int
	label    uint32
}

// steerLiveLinks relabels links by traces and returns the links each
// chosen flow was traced over (there and back); nil when tracing does not
// apply or nothing could be traced. m gives the ports' addresses.
func (c *Coordinator) steerLiveLinks(ctx context.Context, topo *topology.Topology, m *matrix.Matrix, links []liveplan.Link) map[liveFlow][]int32 {
	if c.opts.SkipTrace || topo == nil || topo.LinkLayer != topology.RoCE || !topo.HasAddrs() || m == nil || len(links) == 0 {
		return nil
	}
	var cells []traceCell
	for _, l := range links {
		for _, cand := range linkplan.Candidates(l.Label, steerCandidates) {
			sp := linkplan.Sport(cand)
			cells = append(cells, traceCell{src: l.Src, dst: l.Dst, rail: l.Rail, flow: sp, back: sp})
		}
	}
	ctx, cancel := context.WithTimeout(ctx, tracePhaseBound)
	defer cancel()
	start := time.Now()
	out, back := map[flowKey]wire.FlowPath{}, map[flowKey]wire.FlowPath{}
	for _, f := range c.traceCells(ctx, m, cells) {
		k := flowKey{f.Src, f.Dst, f.Rail, f.Flow}
		if f.Back {
			back[k] = f
		} else {
			out[k] = f
		}
	}
	paths := map[liveFlow][]int32{}
	moved := 0
	for i := range links {
		l := &links[i]
		hs, ok1 := topo.HCA(l.Src, l.Rail)
		hd, ok2 := topo.HCA(l.Dst, l.Rail)
		if !ok1 || !ok2 {
			continue
		}
		t := steerTest{src: l.Src, dst: l.Dst, hs: hs, hd: hd, rail: l.Rail, cands: linkplan.Candidates(l.Label, steerCandidates), label: &l.Label}
		f, _ := chooseCandidate(topo, t, out)
		label, ok := linkplan.LabelOf(f.Flow, t.cands)
		if !ok {
			continue
		}
		there, err1 := topo.PathFromHops(nil, hs, hd, hopAddrs(nil, f.Hops))
		b := back[flowKey{l.Src, l.Dst, l.Rail, f.Flow}]
		home, err2 := topo.PathFromHops(nil, hd, hs, hopAddrs(nil, b.Hops))
		if err1 != nil || err2 != nil {
			continue
		}
		if label != l.Label {
			l.Label = label
			moved++
		}
		var links []int32
		for _, lk := range slices.Concat(there, home) {
			if !slices.Contains(links, int32(lk)) {
				links = append(links, int32(lk))
			}
		}
		paths[liveFlow{l.Src, l.Dst, l.Rail, l.Label}] = links
	}
	c.log.Info("live link flows steered by traces", "flows", len(links), "traced", len(paths), "relabelled", moved,
		"took", time.Since(start).Round(time.Millisecond))
	if len(paths) == 0 {
		return nil
	}
	return paths
}
