package sim

import (
	"errors"
	"net/netip"
)

// Paths is the fabric's topology as the simulator reads it; package
// topology implements it. Links are numbered by the topology.
type Paths interface {
	// HCA finds node's HCA on rail.
	HCA(node string, rail int) (int, bool)
	// AppendRoute appends the links a test from HCA src to HCA dst with
	// flow (a RoCE UDP source port) crosses, from src's own cable to
	// dst's, routed around the withdrawn links of avoid (nil: none).
	AppendRoute(buf []int32, src, dst int, flow uint32, avoid map[int32]bool) []int32
	// TargetLinks resolves a fault's target (LinkTarget's fields).
	TargetLinks(sw, from, to string, oneWay bool) ([]int32, error)
	// HopAddrs appends, for each switch a route arrives at, the address
	// it answers traces from (the zero Addr for none).
	HopAddrs(buf []netip.Addr, route []int32) []netip.Addr
}

// arrivals is a Paths that tells a route that reaches its destination
// from one that stops short, where no up/down path joins the two ends
// (an HCA cabled to another rail's leaf): such a test's packets are lost.
type arrivals interface {
	Arrives(route []int32, dst int) bool
}

// linkFaults are the link and switch faults resolved to directed links.
type linkFaults struct {
	fx map[int32]Effects
	// flaps are the flapping faults on each link, kept apart from fx:
	// each is drawn once per test, however many of its links the test
	// crosses. nflap numbers them.
	flaps map[int32][]flapMet
	nflap int
	// withdrawn are the links the routing protocol took out (the
	// withdrawn effect): routes go around them, no test meets them.
	withdrawn map[int32]bool
}

func (f *Fabric) resolveLinks(faults []Fault) (*linkFaults, error) {
	var errs []error
	lf := &linkFaults{fx: map[int32]Effects{}}
	for _, ft := range faults {
		if ft.Link == nil {
			continue
		}
		links, err := ft.Link.resolve(f.topo)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ft.Effects.Withdrawn {
			if lf.withdrawn == nil {
				lf.withdrawn = map[int32]bool{}
			}
			for _, l := range links {
				lf.withdrawn[l] = true
			}
			continue
		}
		for _, l := range links {
			lf.fx[l] = merge(lf.fx[l], ft.Effects)
		}
		if ft.Effects.Flap > 0 {
			lf.addFlap(ft.Effects.Flap, links)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(lf.fx) == 0 && len(lf.withdrawn) == 0 {
		return nil, nil
	}
	return lf, nil
}

// rxeSport is the UDP source port Debian 12's rdma_rxe gives a QP's RoCE
// v2 packets: 0xC000 plus the top 14 bits of the QP number times the
// kernel's 32-bit golden-ratio constant (hash_32). The sim reports it as
// rxe would, so the demo's flows spread over paths as the lab's do.
func rxeSport(qpn uint32) uint16 {
	return 0xC000 | uint16((qpn*0x61C88647)>>(32-14))
}

// routeEffects is what the links between this session's HCA and the peer's
// do to the test: the writes meet the data path's faults in full, the
// acknowledgements (the responder QP's own flow, so possibly another
// path) the reverse path's down links and ackShare of its loss. It also
// records how lossy the two directions are, for the ports' counters, and
// the flapping faults on either path, for begin to draw.
func (s *Session) routeEffects(remoteRail int) Effects {
	fab := s.node.fab
	lf, ends, checks, ok := fab.routing()
	if !ok {
		return Effects{}
	}
	t := fab.topo
	src, ok1 := t.HCA(s.node.name, s.hca)
	dst, ok2 := t.HCA(s.remote.Node, remoteRail)
	if !ok1 || !ok2 {
		return Effects{}
	}
	var buf [16]int32
	var data, ack Effects
	route := t.AppendRoute(buf[:0], src, dst, fab.ecmpFlow(s.info.UDPSport), lf.withdrawn)
	data.Down = checks && !ends.Arrives(route, dst)
	for i, l := range route {
		data = merge(data, lf.fx[l])
		if lf.flaps != nil {
			s.meetFlaps(lf, l, i, len(route), endSrc, endDst)
		}
	}
	route = t.AppendRoute(buf[:0], dst, src, fab.ecmpFlow(s.remote.UDPSport), lf.withdrawn)
	ack.Down = checks && !ends.Arrives(route, src)
	for i, l := range route {
		if e, ok := lf.fx[l]; ok {
			ack = merge(ack, Effects{Down: e.Down, Loss: e.Loss})
		}
		if lf.flaps != nil {
			s.meetFlaps(lf, l, i, len(route), endDst, endSrc)
		}
	}
	s.linkLoss = [2]float64{data.Loss, ack.Loss}
	data.Loss = 1 - (1-data.Loss)*(1-ackShare*ack.Loss)
	data.Down = data.Down || ack.Down
	return data
}

// routing is what a route's effects need: the link faults (empty, never
// nil) and whether the topology tells routes that stop short; false when
// routes cannot change a test (no topology, or neither faults nor checks).
func (f *Fabric) routing() (lf *linkFaults, ends arrivals, checks, ok bool) {
	lf, t := f.links.Load(), f.topo
	ends, checks = t.(arrivals)
	if t == nil || (lf == nil && !checks) {
		return nil, nil, false, false
	}
	if lf == nil {
		lf = &linkFaults{}
	}
	return lf, ends, checks, true
}

// ecmpFlow is what the switches hash a RoCE flow with source port sport
// by: the port, mixed with the fabric's hash seed when it has one.
func (f *Fabric) ecmpFlow(sport uint16) uint32 {
	if f.seeded == 0 || !f.spec.roce() {
		return uint32(sport)
	}
	return uint32(sport) ^ f.seeded<<16 ^ f.seeded
}
