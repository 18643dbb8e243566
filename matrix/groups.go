package matrix

import (
	"fmt"
	"sort"
)

// A switch group is a block of nodes sharing a label value (leaf=L3,
// rack=r12): the nodes behind one leaf switch. When that switch dies, every
// cell touching its nodes fails on the rails it serves, while the rest of
// the fabric is fine; when only its uplinks die, its nodes still talk to
// each other. Both are one component to replace, not N HCAs.

// autoGroupLabels are tried in order when Thresholds.GroupLabel is empty.
var autoGroupLabels = []string{"leaf", "switch", "rack", "group"}

// groupSet is the switch groups of a sweep.
type groupSet struct {
	label string
	names []string // label values, sorted; the group's index is its id
	of    []int    // node index → group id, -1 when unlabelled; nil = no groups
}

// GroupLabel is the label key switch groups are formed from for nodes, as
// the analysis picks it (label "" = automatic, "-" = none): the live
// mesh's plan groups nodes the same way the matrix localizes them.
func GroupLabel(ns []Node, label string) string {
	g := findGroups(ns, label)
	if g.of == nil {
		return ""
	}
	return g.label
}

// findGroups groups nodes by label. A label is used only when at least two
// nodes carry it: one labelled node forms no block.
func findGroups(ns []Node, label string) groupSet {
	if label == "-" {
		return groupSet{}
	}
	if label == "" {
		for _, cand := range autoGroupLabels {
			if labelled(ns, cand) >= 2 {
				label = cand
				break
			}
		}
	}
	if label == "" || labelled(ns, label) < 2 {
		return groupSet{label: label}
	}
	gs := groupSet{label: label, of: make([]int, len(ns))}
	ids := map[string]int{}
	for _, n := range ns {
		if v, ok := n.Labels[label]; ok && v != "" {
			ids[v] = 0
		}
	}
	for v := range ids {
		gs.names = append(gs.names, v)
	}
	sort.Strings(gs.names)
	for i, v := range gs.names {
		ids[v] = i
	}
	for i, n := range ns {
		gs.of[i] = -1
		if v, ok := n.Labels[label]; ok && v != "" {
			gs.of[i] = ids[v]
		}
	}
	return gs
}

func labelled(ns []Node, label string) int {
	n := 0
	for _, node := range ns {
		if node.Labels[label] != "" {
			n++
		}
	}
	return n
}

func (g groupSet) title(id int) string { return fmt.Sprintf("%s=%s", g.label, g.names[id]) }

// groupFinding is a switch group blamed on one rail.
type groupFinding struct {
	group, rail           int
	cells                 []int // bad cells it explains
	crossBad, crossTested int   // cells between the group and the rest
	innerBad, innerTested int   // cells inside the group
	outerBad, outerTested int   // cells touching neither (at acceptance)
	members, outside      int   // nodes in and out of the group on the rail
	ambiguous, collapsed  bool
}

type groupTally struct{ crossBad, crossTested, innerBad, innerTested int }

// tallyGroups counts, for every group, the unexplained tested cells across
// its border and inside it. It also returns the rail's unexplained totals.
func (l *localizer) tallyGroups(sp *railSpan, gid []int) (t []groupTally, bad, tested int) {
	t = make([]groupTally, len(l.groups.names))
	m := len(sp.members)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			if i == j {
				continue
			}
			k := sp.at(i, j)
			if !l.testedAt(k) || l.explainedAt(k) {
				continue
			}
			b := 0
			if l.badAt(k) {
				b = 1
			}
			tested++
			bad += b
			gi, gj := gid[i], gid[j]
			if gi >= 0 && gi == gj {
				t[gi].innerTested++
				t[gi].innerBad += b
				continue
			}
			for _, g := range []int{gi, gj} {
				if g >= 0 {
					t[g].crossTested++
					t[g].crossBad += b
				}
			}
		}
	}
	return t, bad, tested
}

// groupsOnRail blames the switch groups that explain a rail's bad cells: a
// group whose border cells are mostly bad while its inside is either mostly
// bad (switch down) or fine (uplinks down). The strongest group is taken
// first and the rest re-counted without its cells, so two dead leaves are
// two suspects and the healthy group talking to both is none. The blame
// stands only if what no group explains is fine; a rail that is bad
// everywhere is the rail's, not a group's. It reports whether any group
// was blamed.
func (l *localizer) groupsOnRail(sp *railSpan) bool {
	if l.groups.of == nil {
		return false
	}
	m := len(sp.members)
	gid := make([]int, m)
	size := make([]int, len(l.groups.names))
	for i, n := range sp.members {
		gid[i] = l.groups.of[n]
		if gid[i] >= 0 {
			size[gid[i]]++
		}
	}
	taken := make([]bool, len(size))
	var found []groupFinding
	for {
		t, bad, tested := l.tallyGroups(sp, gid)
		best := -1
		for g := range t {
			// Two nodes on each side at least: one node is an HCA or node
			// suspect, and the outside must have cells of its own to compare.
			if taken[g] || size[g] < 2 || m-size[g] < 2 || !groupPattern(t[g]) {
				continue
			}
			if best < 0 || t[g].crossBad+t[g].innerBad > t[best].crossBad+t[best].innerBad {
				best = g
			}
		}
		if best < 0 {
			break
		}
		x := t[best]
		f := groupFinding{group: best, rail: sp.rail, members: size[best], outside: m - size[best],
			crossBad: x.crossBad, crossTested: x.crossTested, innerBad: x.innerBad, innerTested: x.innerTested,
			outerBad: bad - x.crossBad - x.innerBad, outerTested: tested - x.crossTested - x.innerTested}
		for i := range sp.members {
			if gid[i] != best {
				continue
			}
			for j := range sp.members {
				if j != i {
					l.takeGroup(&f, sp.at(i, j))
					l.takeGroup(&f, sp.at(j, i))
				}
			}
		}
		taken[best] = true
		found = append(found, f)
	}
	if len(found) == 0 {
		return false
	}
	inGroup := make([]bool, m)
	for _, f := range found {
		for i := range gid {
			inGroup[i] = inGroup[i] || gid[i] == f.group
		}
	}
	bgBad, bgTested := l.background(sp, inGroup)
	if !fine(bgBad, bgTested) {
		for _, f := range found {
			for _, k := range f.cells {
				l.state[k] &^= stExplained
			}
		}
		return false
	}
	for _, f := range found {
		for _, k := range f.cells {
			l.state[k] |= stByGroup
		}
		f.ambiguous = fine(f.innerBad, f.innerTested) && oneGroupOutside(gid, f.group)
		for i, n := range sp.members {
			if gid[i] == f.group {
				l.grouped[n*l.m.Rails+sp.rail] = true
			}
		}
		l.gfindings = append(l.gfindings, f)
	}
	return true
}

func groupPattern(t groupTally) bool {
	if t.crossTested < 2 || !mostly(t.crossBad, t.crossTested) {
		return false
	}
	return t.innerTested == 0 || mostly(t.innerBad, t.innerTested) || fine(t.innerBad, t.innerTested)
}

func (l *localizer) takeGroup(f *groupFinding, k int) {
	if l.badAt(k) && !l.explainedAt(k) {
		f.cells = append(f.cells, k)
		l.state[k] |= stExplained
	}
}

// oneGroupOutside: every node outside group g on the rail is in one other
// group. Then a failing border with healthy insides cannot say whose
// uplinks broke.
func oneGroupOutside(gid []int, g int) bool {
	other := -2
	for _, x := range gid {
		switch {
		case x == g:
		case x < 0:
			return false
		case other == -2:
			other = x
		case x != other:
			return false
		}
	}
	return other >= 0
}

// collapseGroups merges a group's per-rail findings into one suspect for
// all rails when every rail that can speak about its nodes blames it (a
// rack's top-of-rack switch or power, rather than one rail's leaf).
func (l *localizer) collapseGroups() {
	byGroup := map[int][]int{}
	for i, f := range l.gfindings {
		byGroup[f.group] = append(byGroup[f.group], i)
	}
	for g := range l.groups.names {
		fs := byGroup[g]
		if len(fs) < 2 {
			continue
		}
		informative := 0
		for r := 0; r < l.m.Rails; r++ {
			for n, id := range l.groups.of {
				if id == g && l.tested[n*l.m.Rails+r] > 0 && !l.absorbed[n*l.m.Rails+r] {
					informative++
					break
				}
			}
		}
		if len(fs) != informative {
			continue
		}
		var parts []*groupFinding
		for _, i := range fs {
			l.gfindings[i].collapsed = true
			parts = append(parts, &l.gfindings[i])
		}
		l.out = append(l.out, l.groupSuspect(parts, AllRails))
	}
	for i := range l.gfindings {
		if f := &l.gfindings[i]; !f.collapsed {
			l.out = append(l.out, l.groupSuspect([]*groupFinding{f}, f.rail))
		}
	}
}

// regroundGroups recounts the outside of each group blamed on a rail once
// the HCAs there are blamed too: a dead HCA elsewhere on the rail is its
// own suspect and should not make the group's background look noisy. Bad
// cells another suspect already explains are left out of the background;
// whatever nobody explains (what will become pairs) stays in.
func (l *localizer) regroundGroups(sp *railSpan) {
	for gi := range l.gfindings {
		f := &l.gfindings[gi]
		if f.rail != sp.rail {
			continue
		}
		f.outerBad, f.outerTested = 0, 0
		for i, a := range sp.members {
			if l.groups.of[a] == f.group {
				continue
			}
			for j, b := range sp.members {
				if i == j || l.groups.of[b] == f.group {
					continue
				}
				k := sp.at(i, j)
				if !l.testedAt(k) || (l.badAt(k) && l.explainedAt(k)) {
					continue
				}
				f.outerTested++
				if l.badAt(k) {
					f.outerBad++
				}
			}
		}
	}
}
