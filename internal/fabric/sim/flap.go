package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A flapping cable or switch (flap=P%) is down for a share P of the time.
// Tests share no clock in the sim, so each test meets each flapping fault
// on its writes' or acknowledgements' path down with probability P, drawn
// from the test's own random stream (Session.begin): one seed and one
// sequence of tests meet the same outages, and a retest, the next
// attempt, draws again as a real retest runs later. A test that meets one
// down fails as a test over a down link does.

// flapMet is a flapping fault a test crosses: its share of down time and
// which of the test's HCAs it is the own cable of (its port counts the
// outage in link_downed).
type flapMet struct {
	id   int
	p    float64
	ends uint8
}

const (
	endSrc uint8 = 1 << iota // the initiator's HCA
	endDst                   // the target's HCA
)

func (f *Fault) parseFlap(tok, val string) error {
	if f.Link == nil {
		hca := "NODE/DEVICE"
		if f.node != "" && f.Device != "" {
			hca = f.node + "/" + f.Device
		}
		return fmt.Errorf("effect %q: flap is a cable or switch effect; for an HCA's own cable write cable=%s~LEAF:%s", tok, hca, tok)
	}
	pct, isPct := strings.CutSuffix(val, "%")
	p, err := strconv.ParseFloat(pct, 64)
	if !isPct || err != nil || !(p > 0 && p < 100) {
		return fmt.Errorf("bad value in %q: flap wants the share of the time the link is down, a percentage 0 < P < 100 "+
			"with a %% sign, like flap=20%% (for a link down all the time write down)", tok)
	}
	f.Effects.Flap = p / 100
	return nil
}

// addFlap gives a resolved flapping fault its id on each of its links.
func (lf *linkFaults) addFlap(p float64, links []int32) {
	if lf.flaps == nil {
		lf.flaps = map[int32][]flapMet{}
	}
	id := lf.nflap
	lf.nflap++
	for _, l := range links {
		lf.flaps[l] = append(lf.flaps[l], flapMet{id: id, p: p})
	}
}

// meetFlaps records the flapping faults on link l, the i-th of a route of
// n links. A route starts at its source HCA's own cable and ends at its
// destination's (Paths.AppendRoute), so first and last say which HCA's
// cable i is. A fault met twice (a cable's two directions, or a switch)
// stays one fault: it is down for the whole test or not at all.
func (s *Session) meetFlaps(lf *linkFaults, l int32, i, n int, first, last uint8) {
	var ends uint8
	if i == 0 {
		ends |= first
	}
	if i == n-1 && n > 1 {
		ends |= last
	}
	for _, f := range lf.flaps[l] {
		k := slices.IndexFunc(s.flaps, func(m flapMet) bool { return m.id == f.id })
		if k < 0 {
			s.flaps = append(s.flaps, f)
			k = len(s.flaps) - 1
		}
		s.flaps[k].ends |= ends
	}
}

// drawFlaps decides, at the test's first transfer, which flapping faults
// it meets down. Each outage of an HCA's own cable is one its port
// counts in link_downed, as a real port counts every time its link drops.
func (s *Session) drawFlaps() {
	fab := s.node.fab
	down := false
	for _, m := range s.flaps {
		if s.rng.Float64() >= m.p {
			continue
		}
		down = true
		if m.ends&endSrc != 0 {
			fab.counts.add(s.node.name, s.ep.Device, cLinkDowned, 1)
		}
		if m.ends&endDst != 0 {
			fab.counts.add(s.remote.Node, s.remote.Device, cLinkDowned, 1)
		}
	}
	if down && s.doom == nil {
		s.doom = s.linkDown()
	}
}
