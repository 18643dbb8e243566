package coordinator

import (
	"fmt"
	"slices"

	"github.com/rdmamesh/rdmamesh/coordinator/linkplan"
	"github.com/rdmamesh/rdmamesh/coordinator/live"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/liveplan"
	"github.com/rdmamesh/rdmamesh/topology"
)

// LiveLinks are the always-on mesh's steered link flows: the link sweep's
// plan for the live members (every cable between switches crossed both
// ways by tests of two partners), each test a flow its initiator probes
// with the test's flow label. Only RoCE steers by label; on InfiniBand a
// UD probe to a LID takes the destination's one route, so there are none.
//
// It returns, too, what of the topology and the members did not match.
func LiveLinks(t *topology.Topology, members []liveplan.Member) ([]liveplan.Link, []string, error) {
	if t == nil || t.LinkLayer != topology.RoCE {
		return nil, nil, nil
	}
	lm := make([]linkplan.Member, len(members))
	for i, m := range members {
		lm[i] = linkplan.Member{Name: m.Name, Rails: m.Rails}
	}
	lp, err := linkplan.Links(t, lm)
	if err != nil {
		return nil, nil, err
	}
	var out []liveplan.Link
	for i, p := range lp.Pairs {
		for _, rf := range lp.Steer[i] {
			if rf.A != 0 {
				out = append(out, liveplan.Link{Src: p.A, Dst: p.B, Rail: rf.Rail, Label: rf.A})
			}
			if rf.B != 0 {
				out = append(out, liveplan.Link{Src: p.B, Dst: p.A, Rail: rf.Rail, Label: rf.B})
			}
		}
	}
	return out, lp.Unmatched, nil
}

// LinkRouter is the live link watch's view of t (live.LinkRouter).
func LinkRouter(t *topology.Topology) live.LinkRouter { return topoRouter{t: t} }

// topoRouter routes live link flows over what was traced of them, else
// over the topology's model of ECMP, as the link plan chose their labels.
type topoRouter struct {
	t      *topology.Topology
	traced map[liveFlow][]int32
}

func (r topoRouter) FlowLinks(buf []int32, src, dst string, rail int, label uint32) ([]int32, bool) {
	if links, ok := r.traced[liveFlow{src, dst, rail, label}]; ok {
		return append(buf, links...), true
	} else if r.traced != nil {
		// The switches hash otherwise than the model (that is why the
		// flows were traced): a flow not traced, or under a label an
		// older plan used, has no path to put its losses on.
		return buf, false
	}
	a, ok1 := r.t.HCA(src, rail)
	b, ok2 := r.t.HCA(dst, rail)
	if !ok1 || !ok2 {
		return buf, false
	}
	flow := uint32(linkplan.Sport(label))
	var lb [16]topology.Link
	start := len(buf)
	for _, leg := range [2][2]int{{a, b}, {b, a}} { // the answer carries the probe's label back
		route, _ := r.t.Route(lb[:0], leg[0], leg[1], flow)
		for _, l := range route {
			if !slices.Contains(buf[start:], int32(l)) {
				buf = append(buf, int32(l))
			}
		}
	}
	return buf, true
}

func (r topoRouter) HostLinks(node string, rail int) ([2]int32, int32, bool) {
	h, ok := r.t.HCA(node, rail)
	if !ok || r.t.LeafOf(h) < 0 {
		return [2]int32{}, -1, false
	}
	c := int32(r.t.HCACable(h))
	return [2]int32{2 * c, 2*c + 1}, int32(r.t.LeafOf(h)), true
}

func (r topoRouter) CableName(c int32) string { return r.t.CableName(int(c)) }

// judgeLinks judges the link flows of the newest windows and logs each
// episode once as it opens and once as it closes.
func (c *Coordinator) judgeLinks() {
	t := c.Topology()
	if t == nil {
		return
	}
	r, version := c.linkRouter(t)
	opened, closed := c.mesh.mx.JudgeLinks(r, version)
	for _, l := range opened {
		c.log.Warn("live: a cable is losing probes", "cable", l.Cable, "state", l.State, "loss", fmt.Sprintf("%.2f%%", 100*l.Loss),
			"lost", l.Lost, "probes", l.Probes, "flows", l.Flows, "partners", l.Partners, "window", l.Since)
	}
	for _, l := range closed {
		c.log.Info("live: cable clean again, episode over", "cable", l.Cable, "worst_loss", fmt.Sprintf("%.2f%%", 100*l.Worst),
			"flaps", l.Flaps, "from_window", l.Since, "last_bad_window", l.LastBad)
	}
}

// linkRouter is the live link watch's router over t with the plan's
// traced flows, and its version: the topology's and the plan's (a new
// plan may have traced its flows anew).
func (c *Coordinator) linkRouter(t *topology.Topology) (live.LinkRouter, string) {
	_, version := c.fsm.CurrentTopology()
	c.mesh.mu.Lock()
	defer c.mesh.mu.Unlock()
	if c.mesh.plan != nil {
		version += fmt.Sprintf("/plan %d", c.mesh.plan.ID)
	}
	return topoRouter{t: t, traced: c.mesh.traced}, version
}

// liveLinkInfo fills the live header's link fields; the caller holds
// c.mesh.mu.
func (c *Coordinator) liveLinkInfo(info *api.LiveInfo) {
	info.LinkFlows, info.TracedFlows = len(c.mesh.plan.Links), len(c.mesh.traced)
	info.Links = c.mesh.mx.Links()
	for _, l := range info.Links {
		if l.State != "recovered" {
			info.Healthy = false
		}
	}
}
