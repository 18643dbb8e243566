package counters

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Delta is what changed on one port between two snapshots: the counters
// that moved, in Known's order.
type Delta struct {
	Device string
	Port   int
	Values []Value
	// Reset is set when some counter went backwards (a driver reload, or
	// someone ran a counter reset): its delta is taken as its new value,
	// which can only under-count.
	Reset bool
}

// Diff is after minus before for the same port. Counters present in only
// one of them are skipped: a counter that appears mid-test says nothing.
func Diff(before, after Snapshot) (Delta, error) {
	d := Delta{Device: after.Device, Port: after.Port}
	if before.Device != after.Device || before.Port != after.Port {
		return d, fmt.Errorf("counters: diff of %s/%d against %s/%d", after.Device, after.Port, before.Device, before.Port)
	}
	prev := make(map[string]uint64, len(before.Values))
	for _, v := range before.Values {
		prev[v.Dir+"/"+v.Name] = v.N
	}
	for _, v := range after.Values {
		p, ok := prev[v.Dir+"/"+v.Name]
		if !ok || v.N == p {
			continue
		}
		n := v.N - p
		if v.N < p {
			n, d.Reset = v.N, true
		}
		d.Values = append(d.Values, Value{Def: v.Def, N: n})
	}
	return d, nil
}

// Evidence is a delta reduced to counts per kind and side: 21 numbers that
// travel with a cell instead of dozens of named counters.
type Evidence [NumKinds][3]uint32

// Evidence sums the delta by kind and side, saturating at the uint32 limit.
func (d Delta) Evidence() Evidence {
	var e Evidence
	for _, v := range d.Values {
		c := &e[v.Kind][v.Side]
		*c = uint32(min(uint64(*c)+v.N, math.MaxUint32))
	}
	return e
}

// Add merges another port's or test's evidence.
func (e *Evidence) Add(o Evidence) {
	for k := range e {
		for s := range e[k] {
			e[k][s] = uint32(min(uint64(e[k][s])+uint64(o[k][s]), math.MaxUint32))
		}
	}
}

// Total is the events of one kind on every side.
func (e Evidence) Total(k Kind) uint64 {
	return uint64(e[k][Ingress]) + uint64(e[k][Egress]) + uint64(e[k][Either])
}

// Empty reports whether nothing was counted.
func (e Evidence) Empty() bool { return e == Evidence{} }

// priority orders kinds when several moved: a link that went down or a
// corrupting cable explains loss and timeouts, not the other way round;
// congestion is the weakest explanation, as CNPs flow on healthy fabrics.
var priority = [...]Kind{LinkDown, Physical, Timeout, Loss, RNR, Discard, Congestion}

// Dominant is the kind that best explains the delta, and the side most of
// its events were seen on (Either when no side has a clear majority).
func (e Evidence) Dominant() (Kind, Side, bool) {
	for _, k := range priority {
		if e.Total(k) == 0 {
			continue
		}
		in, out := uint64(e[k][Ingress]), uint64(e[k][Egress])
		switch {
		case in > 2*out && in > uint64(e[k][Either]):
			return k, Ingress, true
		case out > 2*in && out > uint64(e[k][Either]):
			return k, Egress, true
		}
		return k, Either, true
	}
	return 0, Either, false
}

// meaning says what a kind means to an operator, and where to look.
var meaning = [NumKinds]struct{ what, fix string }{
	Loss:       {"packets lost on the path and recovered by retransmission", "look for drops on this port's path: switch port error and discard counters, PFC/ECN configuration on RoCE, a flapping or overloaded link"},
	Timeout:    {"sends that waited for an ACK in vain and were retransmitted", "the path from this port drops packets or ACKs: check the switch ports on it and, on RoCE, lossless (PFC) configuration"},
	RNR:        {"the receiver had no buffer posted (receiver not ready)", "the receiving application or its memory is the problem, not the link"},
	Physical:   {"corrupt frames received (symbol or receive errors)", "reseat or replace the cable or optics of this port, then check the peer switch port"},
	LinkDown:   {"the link went down or retrained", "check the cable, optics and the switch port's log; a link that retrains under load is failing"},
	Congestion: {"congestion notifications (CNP/ECN) or transmit waits", "the fabric is congested on this path: check the traffic class/QoS configuration and concurrent jobs"},
	Discard:    {"packets discarded for lack of buffers or credits", "check buffer and credit configuration on the port and its switch, and for an overloaded receiver"},
}

// Explain is one sentence of evidence for a port ("" when nothing moved):
// the dominant kind with its largest counters, and the next kind that
// moved too (a timeout is often the tail of a loss).
func (d Delta) Explain() string {
	e := d.Evidence()
	k, side, ok := e.Dominant()
	if !ok {
		return ""
	}
	s := fmt.Sprintf("%s port %d counted %s", d.Device, d.Port, d.kindPhrase(e, k))
	if side != Either {
		s += ", on its " + side.String() + " side"
	}
	for _, o := range priority {
		if o != k && e.Total(o) > 0 {
			s += ", and " + d.kindPhrase(e, o)
			break
		}
	}
	if d.Reset {
		s += "; some counters were reset during the test, so these are lower bounds"
	}
	return s
}

// kindPhrase is "N <meaning> (name +n, ...)" for one kind, its three
// largest counters named.
func (d Delta) kindPhrase(e Evidence, k Kind) string {
	var names []string
	vals := append([]Value(nil), d.Values...)
	sort.SliceStable(vals, func(i, j int) bool { return vals[i].N > vals[j].N })
	for _, v := range vals {
		if v.Kind == k && len(names) < 3 {
			names = append(names, fmt.Sprintf("%s +%d", v.Name, v.N))
		}
	}
	return fmt.Sprintf("%d %s (%s)", e.Total(k), meaning[k].what, strings.Join(names, ", "))
}

// Fix is what to do about the dominant kind ("" when nothing moved).
func (e Evidence) Fix() string {
	k, _, ok := e.Dominant()
	if !ok {
		return ""
	}
	return meaning[k].fix
}
