package cabling

import (
	"fmt"
	"math"
	"sort"
)

// seenHCA is one HCA port and the switch port it heard, without a plan.
type seenHCA struct {
	hp   HostPort
	sw   int // into surveyor.switches
	port int
	f    *Finding
}

type surveyor struct {
	switches []string       // as first heard
	swIndex  map[string]int // folded name → switch
	hcas     []seenHCA
	byNode   map[string]map[int]int // node → rail → hcas index
	rail     []int                  // per switch: the rail most of its HCAs are on, -1 none
	rep      *Report
}

// Survey judges what is seen without a plan, against the fabric's own
// majority: a leaf serves the rail most of its HCAs are on (rail i of a
// node on a leaf of another rail is wrong-rail, two such HCAs of one
// node that would fit each other's leaves are swapped), and rail i of a
// node belongs on the leaf where rail i of the nodes it shares its
// other leaves with is (wrong-leaf otherwise). Names are checked
// against the shape most of the fabric's leaves share. What the plan
// alone can tell is listed in PlanWouldAdd.
func Survey(obs Observed) *Report {
	s := &surveyor{swIndex: map[string]int{}, byNode: map[string]map[int]int{}, rep: &Report{}}
	ports := newPortReader()
	var silent, down int
	for _, hp := range obs.Hosts {
		f := Finding{End: hp.Node + "/" + hp.Device, Node: hp.Node, HCA: hp.Device, Rail: hp.Rail}
		if hp.Neighbor == nil {
			f.Verdict, f.Detail = NoEvidence, "no LLDP neighbour heard"
			if hp.Down {
				f.Detail, down = "the port's link is down", down+1
			} else if silent++; hp.Why != "" {
				f.Detail += ": " + hp.Why
			}
			f.Action = "turn LLDP on at its switch (or read it with lldpd on the node); a plan would say whether a cable belongs here"
			s.rep.Ports = append(s.rep.Ports, f)
			continue
		}
		n := hp.Neighbor
		name := n.SystemName
		if name == "" {
			name = n.ChassisID
		}
		sw, ok := s.swIndex[shortName(name)]
		if !ok {
			sw = len(s.switches)
			s.swIndex[shortName(name)] = sw
			s.switches = append(s.switches, name)
		}
		if s.byNode[hp.Node] == nil {
			s.byNode[hp.Node] = map[int]int{}
		}
		s.byNode[hp.Node][hp.Rail] = len(s.hcas)
		s.hcas = append(s.hcas, seenHCA{hp: hp, sw: sw, port: ports.port(ports.text(n.PortID, n.PortIDType, n.PortDescription))})
	}
	s.leafRails()
	findings := make([]Finding, len(s.hcas))
	for i := range s.hcas {
		h := &s.hcas[i]
		h.f = &findings[i]
		*h.f = Finding{Verdict: OK, End: h.hp.Node + "/" + h.hp.Device, Node: h.hp.Node, HCA: h.hp.Device, Rail: h.hp.Rail,
			Found: s.portName(h.sw, h.port), Evidence: EvidenceVotes}
	}
	s.judgeRails()
	s.judgeLeaves()
	s.judgeNames()
	s.rep.Ports = append(s.rep.Ports, findings...)
	s.planWouldAdd(len(obs.Switches), silent, down)
	s.rep.finish()
	return s.rep
}

func (s *surveyor) portName(sw, port int) string {
	if port == 0 {
		return s.switches[sw] + ":?"
	}
	return fmt.Sprintf("%s:%d", s.switches[sw], port)
}

// leafRails finds each switch's rail: the one more than half its HCAs
// are on.
func (s *surveyor) leafRails() {
	counts := make([]map[int]int, len(s.switches))
	total := make([]int, len(s.switches))
	for _, h := range s.hcas {
		if counts[h.sw] == nil {
			counts[h.sw] = map[int]int{}
		}
		counts[h.sw][h.hp.Rail]++
		total[h.sw]++
	}
	s.rail = make([]int, len(s.switches))
	for sw := range s.rail {
		s.rail[sw] = -1
		for r, n := range counts[sw] {
			if 2*n > total[sw] {
				s.rail[sw] = r
			}
		}
	}
}

func (s *surveyor) judgeRails() {
	for i := range s.hcas {
		h := &s.hcas[i]
		lr := s.rail[h.sw]
		if lr < 0 || lr == h.hp.Rail {
			continue
		}
		if j, ok := s.byNode[h.hp.Node][lr]; ok && s.rail[s.hcas[j].sw] == h.hp.Rail {
			o := &s.hcas[j]
			h.f.Verdict, h.f.With = Swapped, o.f.End
			h.f.Expected = o.f.Found
			h.f.Action = fmt.Sprintf("swap the cables of %s and %s: each is on the other's rail's leaf", h.f.End, o.f.End)
			continue
		}
		h.f.Verdict = WrongRail
		h.f.Detail = fmt.Sprintf("%s serves rail %d: most HCAs on it are rail %d", s.switches[h.sw], lr, lr)
		h.f.Action = fmt.Sprintf("move the cable of %s to a rail-%d leaf", h.f.End, h.hp.Rail)
	}
}

// judgeLeaves votes, for each HCA still ok, where its rail should be:
// the switch that rail of its leaf-mates on the node's other rails is
// on. Counting per leaf first keeps this linear in the HCAs.
func (s *surveyor) judgeLeaves() {
	type leafRail struct{ sw, rail int }
	hist := map[leafRail]map[int]int{} // leaf of some rail, rail r → rail r's switches of its nodes
	for _, rails := range s.byNode {
		for _, i := range rails {
			for r, j := range rails {
				k := leafRail{s.hcas[i].sw, r}
				if hist[k] == nil {
					hist[k] = map[int]int{}
				}
				hist[k][s.hcas[j].sw]++
			}
		}
	}
	// Every HCA is voted on against the same, unjudged fabric, so no
	// verdict depends on the order the nodes come in.
	type cand struct {
		h         *seenHCA
		sw, n, of int
	}
	count := make([]int, len(s.switches))
	for _, h := range s.hcas {
		count[h.sw]++
	}
	for _, rails := range s.byNode {
		var cs []cand
		for r, i := range rails {
			h := &s.hcas[i]
			if h.f.Verdict != OK {
				continue
			}
			votes, total := map[int]int{}, 0
			for r2, j := range rails {
				if r2 == r || s.hcas[j].f.Verdict != OK {
					continue
				}
				for sw, n := range hist[leafRail{s.hcas[j].sw, r}] {
					if sw == h.sw {
						n-- // the node's own vote
					}
					votes[sw] += n
					total += n
				}
			}
			for sw, n := range votes {
				if sw != h.sw && 2*n > total {
					cs = append(cs, cand{h, sw, n, total})
				}
			}
		}
		// With few rails a node's rails vote against each other (with two,
		// each says the other is on the wrong leaf). The miscabled one left
		// a gap on the leaf it belongs on and crowds the one it is on.
		best := math.MinInt
		for _, c := range cs {
			best = max(best, count[c.h.sw]-count[c.sw])
		}
		for _, c := range cs {
			if count[c.h.sw]-count[c.sw] < best {
				continue
			}
			h := c.h
			h.f.Verdict, h.f.Expected = WrongLeaf, s.switches[c.sw]
			h.f.Detail = fmt.Sprintf("%d of %d HCAs on rail %d of the nodes sharing its other leaves are on %s", c.n, c.of, h.hp.Rail, s.switches[c.sw])
			h.f.Action = fmt.Sprintf("move the cable of %s from %s to %s", h.f.End, h.f.Found, s.switches[c.sw])
		}
	}
}

// judgeNames checks leaf names against the shape most share (digits
// folded): a rare shape is a cable to some other switch, and where the
// shape carries the rail (leaf-r3-07), a leaf whose name says another
// rail than its HCAs' is misnamed or miscabled.
func (s *surveyor) judgeNames() {
	shapes := map[string]int{}
	for _, h := range s.hcas {
		sh, _ := shape(s.switches[h.sw])
		shapes[sh]++
	}
	top, topN := "", 0
	for sh, n := range shapes {
		if n > topN || n == topN && sh < top {
			top, topN = sh, n
		}
	}
	railAt := s.railField(top)
	for i := range s.hcas {
		h := &s.hcas[i]
		sh, nums := shape(s.switches[h.sw])
		switch {
		case h.f.Verdict != OK:
		case sh != top && 20*shapes[sh] < len(s.hcas):
			h.f.Verdict = NamePattern
			h.f.Detail = fmt.Sprintf("%s breaks the shape %s that %d of %d HCA ports' switches share", s.switches[h.sw], top, topN, len(s.hcas))
			h.f.Action = fmt.Sprintf("check that %s's cable goes to a leaf of this fabric", h.f.End)
		case sh == top && railAt >= 0 && nums[railAt] != h.hp.Rail:
			h.f.Verdict = NamePattern
			h.f.Detail = fmt.Sprintf("%s's name says rail %d, the HCA is rail %d", s.switches[h.sw], nums[railAt], h.hp.Rail)
			h.f.Action = fmt.Sprintf("move the cable of %s to a rail-%d leaf, or rename the switch", h.f.End, h.hp.Rail)
		}
	}
}

// railField is the number of the shape that equals the HCA's rail on
// at least 3 in 4 of the HCAs under switches of that shape, -1 if none:
// a misnamed leaf or two must not hide the pattern.
func (s *surveyor) railField(top string) int {
	agree := map[int]int{}
	n := 0
	for _, h := range s.hcas {
		sh, nums := shape(s.switches[h.sw])
		if sh != top {
			continue
		}
		n++
		for k, v := range nums {
			if v == h.hp.Rail {
				agree[k]++
			}
		}
	}
	best := -1
	for k, a := range agree {
		if n >= 8 && 4*a >= 3*n && (best < 0 || k < best) {
			best = k
		}
	}
	return best
}

func (s *surveyor) planWouldAdd(switchLines, silent, down int) {
	add := []string{
		"name the port each HCA belongs in: without a plan an HCA on a wrong port of the right leaf looks right",
		"say which side is wrong where a leaf's HCAs split evenly between rails, or a node's leaf-mates disagree",
		"name nodes and HCAs that should not be there at all",
	}
	if down+silent > 0 {
		add = append(add, fmt.Sprintf("tell a missing cable from a port meant to be empty (%d ports down, %d silent)", down, silent))
	}
	if switchLines > 0 {
		add = append(add, fmt.Sprintf("judge the cables between switches (%d switch table lines read, none judged)", switchLines))
	}
	sort.Strings(add)
	s.rep.PlanWouldAdd = add
}
