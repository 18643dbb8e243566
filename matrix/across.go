package matrix

import (
	"sort"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// This file holds the steps that look across rails once every rail has been
// localized on its own: node collapse, untested nodes and the final order.

// collapseNodes merges a node's HCA findings into one node suspect when
// every rail that could speak about it blames it: then the common factor is
// the host (PCIe root, CPU, the worker), not one HCA. Rails a rail suspect
// already explains say nothing about the node and are left out. One rail is
// not enough to tell the node from its HCA, unless the cells say the worker
// itself is gone (peer-lost).
func (l *localizer) collapseNodes() {
	byNode := make(map[int][]int)
	for i, f := range l.findings {
		byNode[f.node] = append(byNode[f.node], i)
	}
	for n := range l.m.Nodes {
		fs := byNode[n]
		if len(fs) == 0 {
			continue
		}
		informative := 0
		for r := 0; r < l.m.Rails; r++ {
			at := n*l.m.Rails + r
			if l.tested[at] > 0 && !l.absorbed[at] && !l.grouped[at] {
				informative++
			}
		}
		if len(fs) != informative {
			continue
		}
		bad, total := l.nodeCells(n)
		peerLost := dominant(l.a, bad).class == probe.ClassPeerLost
		if len(fs) < 2 && !peerLost {
			continue
		}
		parts := make([]*finding, len(fs))
		for j, i := range fs {
			l.findings[i].collapsed = true
			parts[j] = &l.findings[i]
		}
		l.out = append(l.out, l.nodeSuspect(n, bad, total, parts))
	}
}

// nodeCells lists a node's bad cells on every rail and counts its tested ones.
func (l *localizer) nodeCells(n int) (bad []int, tested int) {
	for si := range l.spans {
		sp := &l.spans[si]
		i := sort.SearchInts(sp.members, n)
		if i == len(sp.members) || sp.members[i] != n {
			continue
		}
		for j := range sp.members {
			if j == i {
				continue
			}
			for _, k := range []int{sp.at(i, j), sp.at(j, i)} {
				if l.testedAt(k) {
					tested++
				}
				if l.badAt(k) {
					bad = append(bad, k)
				}
			}
		}
	}
	sort.Ints(bad)
	return bad, tested
}

// untestedNodes names nodes more than half of whose cells were not measured while
// the rest of the fabric was: a worker that never joined the sweep, or one
// the control network could not reach. The per-rail counts say which nodes
// qualify, so only those have their cells listed.
func (l *localizer) untestedNodes() {
	for n := range l.m.Nodes {
		tested, all := 0, 0
		for si := range l.spans {
			sp := &l.spans[si]
			if i := sort.SearchInts(sp.members, n); i < len(sp.members) && sp.members[i] == n {
				tested += l.tested[n*l.m.Rails+sp.rail]
				all += 2 * (len(sp.members) - 1)
			}
		}
		// Half is enough: cells a worker could not take part in say nothing
		// of the fabric, so naming the worker claims no fault.
		if all == 0 || 2*(all-tested) <= all {
			continue
		}
		var cells []int
		for si := range l.spans {
			sp := &l.spans[si]
			i := sort.SearchInts(sp.members, n)
			if i == len(sp.members) || sp.members[i] != n {
				continue
			}
			for j := range sp.members {
				if j == i {
					continue
				}
				for _, k := range []int{sp.at(i, j), sp.at(j, i)} {
					if !l.testedAt(k) {
						cells = append(cells, k)
					}
				}
			}
		}
		if len(cells) > 0 {
			sort.Ints(cells)
			l.out = append(l.out, l.untestedSuspect(n, cells))
		}
	}
}

var kindRank = map[string]int{KindRail: 0, KindSwitch: 1, KindSwitchGroup: 1, KindLink: 2, KindNode: 2, KindCable: 3, KindHCA: 3, KindPair: 4}

// sortSuspects puts the most implicated first: most bad cells, then the
// wider component, then a fixed order so equal sweeps give equal lists.
// suspectTier orders suspects before their size does. A component whose
// tests failed outright (retry exceeded, port down, a dead worker) comes
// before one whose tests merely measured worse than their population,
// however many cells the slower one touches: dropped writes kill a job, a
// slow link slows it. Weak evidence (one transient pair) comes after
// anything confirmed, whatever its class. Within confirmed performance
// suspects and within weak ones, a suspect with a hard failure among its
// cells (HardFailures) comes first: a link that dropped a write is worse
// than one that is only slower, and among weak suspects the drop is the
// likelier fault (the lab's TCG noise makes weak slow suspects of healthy
// HCAs).
func suspectTier(s *Suspect) int {
	hard := s.Verdict == VerdictFailed || s.HardFailures > 0
	switch {
	case s.Confidence < LowConfidence && hard:
		return 3
	case s.Confidence < LowConfidence:
		return 4
	case s.Verdict == VerdictFailed:
		return 0
	case hard:
		return 1
	}
	return 2
}

func sortSuspects(s []Suspect) {
	sort.SliceStable(s, func(a, b int) bool {
		x, y := &s[a], &s[b]
		if rx, ry := suspectTier(x), suspectTier(y); rx != ry {
			return rx < ry
		}
		if x.Bad != y.Bad {
			return x.Bad > y.Bad
		}
		if kindRank[x.Kind] != kindRank[y.Kind] {
			return kindRank[x.Kind] < kindRank[y.Kind]
		}
		if x.Rail != y.Rail {
			return x.Rail < y.Rail
		}
		if c := strings.Compare(x.Node, y.Node); c != 0 {
			return c < 0
		}
		if c := strings.Compare(x.Peer, y.Peer); c != 0 {
			return c < 0
		}
		if c := strings.Compare(x.Group, y.Group); c != 0 {
			return c < 0
		}
		return x.Device < y.Device
	})
}
