package matrix

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/rdmamesh/rdmamesh/topology"
)

// Hop loss: a bad cell's flows are traced with every hop probed hundreds
// of times (the coordinator asks for it). A link that drops packets drops
// the probes that cross it, so from the hop past it on every hop answers
// less than the hop before it; a hop whose ICMP policer drops answers is
// low alone, and the hops after it answer again. This tells apart links
// that carried exactly the same tests (with two leaves, every test
// leaf1 -> spine1 -> leaf2 crosses both of that spine's links), which no
// end-to-end count can.
//
// A hop's answer comes back over the links the probe came, the other
// way, so the probes name a cable; the bad tests' data direction (or the
// probes' own, without bad tests) gives its direction.

// HopLoss is one TTL's probes of a traced flow and the answers to them.
type HopLoss struct{ Sent, Answered int }

// Rules of a loss step at a hop: the answers lost there exceed what the
// hop before it lost with a chance under hopLossP, by at least
// hopLossMinLost probes; every later hop loses no less (within
// hopPersistP); a first hop that loses more than hopPolicedShare is a
// policer, and the flow says nothing about links.
const (
	hopLossP        = 1e-4
	hopPersistP     = 1e-3
	hopLossMinLost  = 3
	hopLossFloor    = 0.005 // the loss a clean hop is granted: late answers, a busy receiver
	hopPolicedShare = 0.5
)

// hopFinding is a cable the probes of one or more flows found lossy.
type hopFinding struct {
	cable int
	link  topology.Link // the direction the (first) flow's probes crossed it
	ways  uint8         // bit 1: probed forward, bit 2: reverse
	// sent and lost at the hop past the link, and lost at the hop before
	// (scaled to sent): the drop is (lost - before) / sent.
	sent, lost int
	before     float64
	hop        int    // the first flow's TTL past the link
	flow       string // the first flow, for the reason: "vm3 -> vm2"
	flows      int
}

func (f *hopFinding) drop() float64 {
	if f.sent == 0 {
		return 0
	}
	return max(0, (float64(f.lost)-f.before)/float64(f.sent))
}

// AddLoss records the hop loss of a flow added with Add: hops by TTL
// from 1.
func (tr *Traced) AddLoss(src, dst string, rail int, back bool, hops []HopLoss) {
	if len(hops) == 0 {
		return
	}
	if tr.loss == nil {
		tr.loss = map[tracedKey][]HopLoss{}
	}
	tr.loss[tracedKey{src, dst, rail, back}] = hops
}

// lossStep finds the link of path past which a flow's probes thin out:
// path runs from the source HCA's cable to the destination's, and TTL k
// is answered by the switch at the end of path[k-1].
func lossStep(path []topology.Link, hops []HopLoss) (at int, ok bool) {
	n := min(len(hops), len(path)-1) // the switches; the destination never answers
	if n < 1 || hops[0].Sent == 0 || lostShare(hops[0]) > hopPolicedShare {
		return 0, false
	}
	prev := 0.0
	for k := range n {
		h := hops[k]
		lost := h.Sent - h.Answered
		expect := float64(h.Sent) * max(prev, hopLossFloor)
		if h.Sent > 0 && lost >= hopLossMinLost && float64(lost) >= expect+hopLossMinLost && PoissonTail(lost, expect) < hopLossP {
			return k, persists(hops[k+1:n], lostShare(h))
		}
		prev = lostShare(h)
	}
	return 0, false
}

// persists: no later hop loses significantly less than share.
func persists(later []HopLoss, share float64) bool {
	for _, h := range later {
		e := float64(h.Sent) * share
		if lost := h.Sent - h.Answered; 1-PoissonTail(lost+1, e) < hopPersistP {
			return false
		}
	}
	return true
}

func lostShare(h HopLoss) float64 {
	if h.Sent == 0 {
		return 0
	}
	return float64(h.Sent-h.Answered) / float64(h.Sent)
}

// hopFindings are the cables the traced flows' hop loss names, worst
// drop first.
func hopFindings(t *topology.Topology, tr *Traced) []hopFinding {
	if t == nil || tr == nil || len(tr.loss) == 0 {
		return nil
	}
	keys := make([]tracedKey, 0, len(tr.loss))
	for k := range tr.loss {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b tracedKey) int {
		return cmp.Or(cmp.Compare(a.src, b.src), cmp.Compare(a.dst, b.dst), cmp.Compare(a.rail, b.rail), cmp.Compare(b2i(a.back), b2i(b.back)))
	})
	by := map[int]*hopFinding{}
	var order []int
	for _, k := range keys {
		path, hops := tr.paths[k], tr.loss[k]
		if len(path) < 2 {
			continue
		}
		at, ok := lossStep(path, hops)
		if !ok {
			continue
		}
		lk := path[at]
		h := hops[at]
		before := 0.0
		if at > 0 {
			before = lostShare(hops[at-1]) * float64(h.Sent)
		}
		f := by[lk.Cable()]
		if f == nil {
			from, to := k.src, k.dst
			if k.back {
				from, to = to, from
			}
			f = &hopFinding{cable: lk.Cable(), link: lk, hop: at + 1, flow: from + " -> " + to}
			by[lk.Cable()] = f
			order = append(order, lk.Cable())
		}
		f.ways |= wayBit(lk)
		f.flows++
		f.sent += h.Sent
		f.lost += h.Sent - h.Answered
		f.before += before
	}
	out := make([]hopFinding, 0, len(order))
	for _, c := range order {
		out = append(out, *by[c])
	}
	slices.SortStableFunc(out, func(a, b hopFinding) int { return cmp.Compare(b.drop(), a.drop()) })
	return out
}

func wayBit(lk topology.Link) uint8 {
	if lk.Forward() {
		return 1
	}
	return 2
}

// hopWords is the finding's evidence in words.
func (f *hopFinding) words(t *topology.Topology) string {
	at := t.LinkTo(f.link)
	hop := "the destination's port"
	if !at.IsHCA() {
		hop = t.Switches[at.Switch].Name
	}
	flows := f.flow + "'s flow"
	if f.flows > 1 {
		flows = fmt.Sprintf("%d flows (%s's first)", f.flows, f.flow)
	}
	return fmt.Sprintf("it drops %.1f %% of the packets that cross it: %d of %d probes of %s went unanswered from the hop past it on (hop %d, %s), against %.0f at the hop before",
		100*f.drop(), f.lost, f.sent, flows, f.hop, hop, math.Round(f.before))
}
