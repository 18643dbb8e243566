package matrix

import (
	"strconv"

	"github.com/rdmamesh/rdmamesh/internal/counters"
)

// PortCounters is what one port's error and congestion counters moved by
// during the sweep, as its worker read them around each test (package
// counters): the evidence a suspect HCA's cause quotes.
type PortCounters struct {
	Rail   int              `json:"rail"`
	Device string           `json:"device"`
	Port   int              `json:"port"`
	Counts []counters.Count `json:"counts"`
	// FromRound is the first round in which a counter moved.
	FromRound int `json:"from_round"`
}

// quoteCounters adds what the counters say to the suspects they explain:
// an HCA's own port, or every port of a node. A verdict alone says
// "retry exceeded" or "slow"; the port counted why (retransmissions, on
// which side; symbol errors; link downs; congestion notifications), and
// its fix leads when it does.
func quoteCounters(nodes []Node, ss []Suspect) {
	by := map[string][]PortCounters{}
	for _, n := range nodes {
		if len(n.Counters) > 0 {
			by[n.Name] = n.Counters
		}
	}
	if len(by) == 0 {
		return
	}
	for i := range ss {
		s := &ss[i]
		if s.Kind != KindHCA && s.Kind != KindNode {
			continue
		}
		var ev counters.Evidence
		var said string
		for _, pc := range by[s.Node] {
			if s.Kind == KindHCA && pc.Rail != s.Rail {
				continue
			}
			d, err := counters.DeltaOf(pc.Device, pc.Port, pc.Counts)
			if err != nil {
				continue
			}
			e := d.Evidence()
			if e.Empty() {
				continue
			}
			ev.Add(e)
			if x := d.Explain(); x != "" {
				if said != "" {
					said += "; "
				}
				said += x
				if pc.FromRound > 0 {
					said += " (from round " + strconv.Itoa(pc.FromRound) + ")"
				}
			}
		}
		if said == "" {
			continue
		}
		s.Reason += "; counters: " + said
		if fix := ev.Fix(); fix != "" {
			if s.Fix == "" {
				s.Fix = fix
			} else {
				s.Fix = fix + "; " + s.Fix
			}
		}
	}
}
