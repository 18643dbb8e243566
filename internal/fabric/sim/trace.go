package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/pathtrace"
)

// Trace answers a worker's trace of a flow from this node as the
// simulated fabric routes it: each switch on the flow's route answers
// from its first address (a switch without one stays silent, as one that
// filters ICMP does) and the destination's RoCE port drops the probe, so
// the trace ends in silence after the last switch, as it does on rxe.
func (n *Node) Trace(ctx context.Context, f pathtrace.Flow) (pathtrace.Path, error) {
	if err := ctx.Err(); err != nil {
		return pathtrace.Path{}, err
	}
	if err := f.Validate(); err != nil {
		return pathtrace.Path{}, err
	}
	t := n.fab.topo
	if t == nil {
		return pathtrace.Path{}, fmt.Errorf("pathtrace: the simulated fabric has no topology, so there are no hops to trace")
	}
	src, ok := n.hcaAt(f.Src.Unmap())
	if !ok {
		return pathtrace.Path{}, fmt.Errorf("pathtrace: %s is not an address of this network namespace: check the address the RoCE GID carries", f.Src)
	}
	dst, ok := n.fab.hcaAt(f.Dst.Unmap())
	if !ok {
		return pathtrace.Path{}, fmt.Errorf("pathtrace: no route to %s", f.Dst)
	}
	var buf [16]int32
	var avoid map[int32]bool
	if lf := n.fab.links.Load(); lf != nil {
		avoid = lf.withdrawn
	}
	route := t.AppendRoute(buf[:0], src, dst, n.fab.ecmpFlow(f.SrcPort), avoid)
	p := pathtrace.Path{Flow: f, At: time.Now()}
	last := 0
	for i, a := range t.HopAddrs(nil, route) {
		h := pathtrace.Hop{TTL: i + 1, Probes: 1}
		if a.IsValid() {
			h.Addr, h.Answer, last = a, "time exceeded", i+1
		} else {
			h.Reason = "no answer"
		}
		p.Hops = append(p.Hops, h)
	}
	p.Hops = p.Hops[:last]
	p.Complete = last == len(route)-1
	p.Why = fmt.Sprintf("the hops after TTL %d were silent (a RoCE endpoint drops the probes)", last)
	if a, ok := t.(arrivals); ok && !a.Arrives(route, dst) {
		p.Why = fmt.Sprintf("the hops after TTL %d were silent: no path joins the two ports as they are cabled, so the packets are lost there", last)
	}
	return p, nil
}

// Loss answers a hop-loss measurement as the simulated links would: a
// probe at TTL k crosses the route's first k links and its answer comes
// back over the same links the other way; each link drops what its
// fault's loss says (all of it when down). The draws are seeded by the
// flow, so a run repeats.
func (n *Node) Loss(ctx context.Context, f pathtrace.Flow, ttls int, o pathtrace.LossOptions) ([]pathtrace.HopCount, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	p, err := n.Trace(ctx, f)
	if err != nil {
		return nil, err
	}
	src, _ := n.hcaAt(f.Src.Unmap())
	dst, _ := n.fab.hcaAt(f.Dst.Unmap())
	t := n.fab.topo
	var buf [16]int32
	lf := n.fab.links.Load()
	var avoid map[int32]bool
	if lf != nil {
		avoid = lf.withdrawn
	}
	route := t.AppendRoute(buf[:0], src, dst, n.fab.ecmpFlow(f.SrcPort), avoid)
	probes := o.Probes
	if probes == 0 {
		probes = pathtrace.DefaultLossProbes
	}
	rng := rand.New(rand.NewPCG(uint64(f.SrcPort), uint64(src)<<32|uint64(dst)))
	out := make([]pathtrace.HopCount, min(ttls, len(p.Hops)))
	pass := 1.0
	for k := range out {
		if k < len(route) && lf != nil {
			for _, l := range []int32{route[k], route[k] ^ 1} {
				if e, ok := lf.fx[l]; ok {
					pass *= 1 - e.Loss
					if e.Down {
						pass = 0
					}
				}
			}
		}
		h := pathtrace.HopCount{TTL: k + 1, Sent: probes}
		for range probes {
			if rng.Float64() < pass {
				h.Answered++
			}
		}
		out[k] = h
	}
	return out, nil
}

// hcaAt is this node's HCA (a topology index) whose port has address a.
func (n *Node) hcaAt(a netip.Addr) (int, bool) {
	for rail := range n.fab.spec.HCAs {
		if ipv4(n.name, rail) == a {
			return n.fab.topo.HCA(n.name, rail)
		}
	}
	return 0, false
}

// hcaAt is the HCA of any node of the fabric with address a.
func (f *Fabric) hcaAt(a netip.Addr) (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.nodes {
		if h, ok := n.hcaAt(a); ok {
			return h, true
		}
	}
	return 0, false
}
