package sim

import (
	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// probeRoute is what the cables and switches between two probe ports do
// to one probe and its answer: the chance both cross (each packet meets
// every link's loss, a flapping link's down share) and whether a down or
// unroutable link stops them. The probe's UDP source port comes from its
// flow label when it has one, else from the sender's QP as rxe makes it;
// the answer goes back with the probe's label (the verbs engine's port
// reads it from the probe's sequence number, fabric.SeqFlowLabel), or
// from the answering QP.
func (f *Fabric) probeRoute(from, to fabric.ProbeAddr) (survive float64, down bool) {
	lf, ends, checks, ok := f.routing()
	if !ok {
		return 1, false
	}
	t := f.topo
	src, ok1 := t.HCA(from.Node, f.spec.deviceIndex(from.Device))
	dst, ok2 := t.HCA(to.Node, f.spec.deviceIndex(to.Device))
	if !ok1 || !ok2 {
		return 1, false
	}
	out, back := rxeSport(from.QPN), rxeSport(to.QPN)
	if to.FlowLabel != 0 {
		out = probe.RoCEv2Sport(to.FlowLabel, 0, 0)
		back = out
	}
	survive = 1
	var buf [16]int32
	leg := func(a, b int, sport uint16) {
		route := t.AppendRoute(buf[:0], a, b, f.ecmpFlow(sport), lf.withdrawn)
		down = down || checks && !ends.Arrives(route, b)
		for _, l := range route {
			e := lf.fx[l]
			down = down || e.Down
			survive *= 1 - e.Loss
			for _, fl := range lf.flaps[l] {
				survive *= 1 - fl.p
			}
		}
	}
	leg(src, dst, out)
	leg(dst, src, back)
	return survive, down
}

// ProbeSurvival is the chance that a probe from one port to another (its
// FlowLabel set as a send's) and the answer both cross the fabric's cable
// and switch faults: 0 where a down link stops them. The live link rig
// draws whole windows of probes from it.
func (f *Fabric) ProbeSurvival(from, to fabric.ProbeAddr) float64 {
	s, down := f.probeRoute(from, to)
	if down {
		return 0
	}
	return s
}
