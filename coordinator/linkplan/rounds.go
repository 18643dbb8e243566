package linkplan

import (
	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/topology"
)

// pack puts the pairs into rounds, first fit in plan order: in a round no
// node takes part twice (a pair's rails run at once, every HCA busy) and
// no switch link carries two of its tests, so a bandwidth test has its
// path to itself. A direction with no label on RoCE takes a path the QP
// numbers pick, unknown until it runs: it is not counted against others.
func pack(t *topology.Topology, pairs []scheduler.Pair, steer [][]scheduler.RailFlow, names []string) [][]int {
	node := make(map[string]int, len(names))
	for i, n := range names {
		node[n] = i
	}
	var rounds [][]int
	var busyNode, busyLink []bitset
	var buf []topology.Link
	for i, p := range pairs {
		var links []topology.Link
		for _, rf := range steer[i] {
			buf = routeLinks(t, buf[:0], p.A, p.B, rf.Rail, rf.A)
			links = append(links, buf...)
			buf = routeLinks(t, buf[:0], p.B, p.A, rf.Rail, rf.B)
			links = append(links, buf...)
		}
		a, b := node[p.A], node[p.B]
		r := 0
		for ; r < len(rounds); r++ {
			if busyNode[r].has(a) || busyNode[r].has(b) || busyLink[r].any(links) {
				continue
			}
			break
		}
		if r == len(rounds) {
			rounds = append(rounds, nil)
			busyNode = append(busyNode, newBitset(len(names)))
			busyLink = append(busyLink, newBitset(2*len(t.Cables)))
		}
		rounds[r] = append(rounds[r], i)
		busyNode[r].set(a)
		busyNode[r].set(b)
		for _, l := range links {
			busyLink[r].set(int(l))
		}
	}
	return rounds
}

// routeLinks appends the switch links src's rail HCA reaches dst's over
// with label, by the model; none when the path is not known in advance.
func routeLinks(t *topology.Topology, buf []topology.Link, src, dst string, rail int, label uint32) []topology.Link {
	hs, ok1 := t.HCA(src, rail)
	hd, ok2 := t.HCA(dst, rail)
	ib := t.LinkLayer == topology.InfiniBand
	if !ok1 || !ok2 || !ib && label == 0 {
		return buf
	}
	flow := uint32(0)
	if !ib {
		flow = uint32(Sport(label))
	}
	route, ok := t.Route(buf, hs, hd, flow)
	if !ok || len(route) < 2 {
		return buf
	}
	n := copy(route, route[1:len(route)-1])
	return route[:n]
}

type bitset []uint64

func newBitset(n int) bitset    { return make(bitset, (n+63)/64) }
func (b bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }
func (b bitset) set(i int)      { b[i/64] |= 1 << (i % 64) }
func (b bitset) any(ls []topology.Link) bool {
	for _, l := range ls {
		if b.has(int(l)) {
			return true
		}
	}
	return false
}
