package cabling

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// portText is a port's name as switches write it, split into its shape
// (digits folded to #) and its numbers: "Eth1/33" is "Eth#/#" and 1, 33.
// A port ID of type mac or network-address holds no port number, so
// only the description is read then.
type portText struct {
	sig  string // "id:SHAPE|desc:SHAPE"
	runs []int  // the ID's numbers, then the description's
	nid  int    // how many of runs are the ID's
	def  rule   // the rule when nothing is learned
}

// rule reads a port number: runs[idx]/div + base. div undoes lane
// numbering (SONiC's Ethernet0, Ethernet4, ... for ports 1, 2, ...),
// base 1 numbering from 0.
type rule struct {
	idx, div, base int
}

func (r rule) apply(runs []int) (int, bool) {
	if r.idx >= len(runs) || runs[r.idx]%r.div != 0 {
		return 0, false
	}
	p := runs[r.idx]/r.div + r.base
	return p, p >= 1
}

func (r rule) String() string {
	s := fmt.Sprintf("number %d", r.idx+1)
	if r.div > 1 {
		s += fmt.Sprintf(" / %d", r.div)
	}
	if r.base > 0 {
		s += fmt.Sprintf(" + %d", r.base)
	}
	return s
}

var noRule = rule{idx: -1, div: 1}

func shape(s string) (string, []int) {
	var b strings.Builder
	var runs []int
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == i {
			b.WriteByte(s[i])
			i++
			continue
		}
		n, err := strconv.Atoi(s[i:j])
		if err != nil || j-i > 9 {
			n = -1 // too long to be a port: a serial number, say
		}
		runs = append(runs, n)
		b.WriteByte('#')
		i = j
	}
	return b.String(), runs
}

// defaultIdx is the last number, but the one before a breakout's
// subport (swp1s2, ethernet1/1/33:1).
func defaultIdx(sh string, n int) int {
	if n >= 2 && (strings.HasSuffix(sh, "#s#") || strings.HasSuffix(sh, "#:#")) {
		return n - 2
	}
	return n - 1
}

func readPortText(id, idType, desc string) *portText {
	p := &portText{def: noRule}
	idShape := "-"
	if idType != "mac" && idType != "network-address" && strings.ContainsAny(id, "0123456789") {
		idShape, p.runs = shape(strings.TrimSpace(id))
	}
	p.nid = len(p.runs)
	descShape := "-"
	if strings.ContainsAny(desc, "0123456789") {
		var r []int
		descShape, r = shape(strings.TrimSpace(desc))
		p.runs = append(p.runs, r...)
	}
	p.sig = "id:" + idShape + "|desc:" + descShape
	switch {
	case p.nid > 0:
		p.def = rule{idx: defaultIdx(idShape, p.nid), div: 1}
	case len(p.runs) > 0:
		p.def = rule{idx: defaultIdx(descShape, len(p.runs)), div: 1}
	}
	return p
}

// portReader reads port numbers, learning per shape which number means
// the port from the ports whose switch the plan confirms (see doc.go).
type portReader struct {
	texts   map[[3]string]*portText
	samples map[sampleKey]int
	wants   map[string][]int // interned want sets
	rules   map[string]rule  // learned, by sig
	learned []PortRule
}

type sampleKey struct {
	text *portText
	want string // a want set's key
}

func newPortReader() *portReader {
	return &portReader{texts: map[[3]string]*portText{}, samples: map[sampleKey]int{}, wants: map[string][]int{}, rules: map[string]rule{}}
}

func (r *portReader) text(id, idType, desc string) *portText {
	k := [3]string{id, idType, desc}
	p, ok := r.texts[k]
	if !ok {
		p = readPortText(id, idType, desc)
		r.texts[k] = p
	}
	return p
}

// sample records that p is one of the ports want (a switch's ports
// toward the neighbour the text came with).
func (r *portReader) sample(p *portText, want []int) {
	if len(p.runs) == 0 || len(want) == 0 {
		return
	}
	var b strings.Builder
	for _, w := range want {
		b.WriteString(strconv.Itoa(w))
		b.WriteByte(',')
	}
	k := b.String()
	if _, ok := r.wants[k]; !ok {
		r.wants[k] = slices.Clone(want)
	}
	r.samples[sampleKey{p, k}]++
}

// learn picks each shape's rule. Another rule than the default replaces
// it only on clear evidence: it agrees with at least learnMin samples,
// with more than half of them and with twice as many as the default, so
// a few miscabled ports cannot teach a wrong rule.
const learnMin = 4

func (r *portReader) learn() {
	type stat struct {
		def   rule
		n     int
		agree map[rule]int
	}
	by := map[string]*stat{}
	for k, n := range r.samples {
		st := by[k.text.sig]
		if st == nil {
			st = &stat{def: k.text.def, agree: map[rule]int{}}
			by[k.text.sig] = st
		}
		st.n += n
		want := r.wants[k.want]
		for idx := range k.text.runs {
			for _, div := range []int{1, 2, 4, 8} {
				for base := range 2 {
					c := rule{idx, div, base}
					if p, ok := c.apply(k.text.runs); ok && slices.Contains(want, p) {
						st.agree[c] += n
					}
				}
			}
		}
	}
	sigs := make([]string, 0, len(by))
	for s := range by {
		sigs = append(sigs, s)
	}
	slices.Sort(sigs)
	for _, sig := range sigs {
		st := by[sig]
		best, bestN := st.def, st.agree[st.def]
		// Map order is random: ties go to the default, then the lowest.
		for c, n := range st.agree {
			if n > bestN || n == bestN && (c == st.def || best != st.def && less(c, best)) {
				best, bestN = c, n
			}
		}
		defN := st.agree[st.def]
		if best != st.def && (bestN < learnMin || 2*bestN <= st.n || bestN < 2*defN) {
			best, bestN = st.def, defN
		}
		r.rules[sig] = best
		r.learned = append(r.learned, PortRule{Shape: sig, Rule: best.String(), Learned: best != st.def, Samples: st.n, Agree: bestN})
	}
}

func less(a, b rule) bool {
	if a.idx != b.idx {
		return a.idx < b.idx
	}
	if a.div != b.div {
		return a.div < b.div
	}
	return a.base < b.base
}

// port is p's number, 0 when it has none.
func (r *portReader) port(p *portText) int {
	ru, ok := r.rules[p.sig]
	if !ok {
		ru = p.def
	}
	if ru.idx < 0 {
		return 0
	}
	n, ok := ru.apply(p.runs)
	if !ok {
		return 0
	}
	return n
}

// PortRule is how one shape of port names was read: which of its
// numbers is the port, as the report records it.
type PortRule struct {
	Shape   string `json:"shape"`   // id:swp#|desc:-
	Rule    string `json:"rule"`    // number 1 / 4 + 1
	Learned bool   `json:"learned"` // false: the default rule
	Samples int    `json:"samples"` // ports of this shape on the switch the plan names
	Agree   int    `json:"agree"`   // of them, read as a planned port
}
