package web

import (
	"fmt"
	"strconv"
	"strings"
)

// overview is the grid's advice on which heatmap shows a sweep's faults
// without reading. The default view is the worst rail of each pair, where a
// dead HCA is a cross and a dead switch a band. But when one rail is bad
// for most of its pairs (every node's mlx5_2 down), the worst of all rails
// is bad almost everywhere: a solid square that reads as a total outage
// and hides the healthy rails. Then the page shows each rail on its own.
type overview struct {
	View string `json:"view"` // "pairs" (all rails, worst of each pair) or "rails" (one small heatmap per rail)
	// Per rail, the share of its tested pairs that are bad (failed, slow
	// or low bandwidth); AllBad the share of pairs bad on some rail.
	RailBad []float64 `json:"rail_bad"`
	AllBad  float64   `json:"all_bad"`
	// BadRails are the rails bad for at least half their pairs.
	BadRails []int `json:"bad_rails,omitempty"`
	// Why says, in one clause for people, what in the sweep chose View.
	Why string `json:"why"`
}

// railWide is the share of a rail's pairs that makes it bad across the
// fabric rather than at a few components; at or above it on every rail,
// the fault is the whole fabric's and the worst-of-rails view is honest.
const railWide = 0.5

// overview reads the status codes once: per rail and, for the worst of the
// rails, per pair. It costs one pass over n²·rails bytes (8 M at 1,024
// nodes × 8 rails, a few ms), once per view.
func (v *view) overview() overview {
	v.overviewOnce.Do(func() { v.ov = v.buildOverview() })
	return v.ov
}

func (v *view) buildOverview() overview {
	rails := max(v.m.Rails, 0)
	status := v.status
	o := overview{View: "pairs", RailBad: make([]float64, rails)}
	railTested := make([]int, rails)
	railBad := make([]int, rails)
	pairs, pairsBad := 0, 0
	for p := 0; p < v.n*v.n; p++ {
		worst := byte(codeNone)
		for r := range status {
			c := status[r][p]
			worst = max(worst, c)
			if c != codeNone && c != statusUntested {
				railTested[r]++
				if c >= statusSlow {
					railBad[r]++
				}
			}
		}
		if worst != codeNone && worst != statusUntested {
			pairs++
			if worst >= statusSlow {
				pairsBad++
			}
		}
	}
	measured := 0 // rails with tested pairs
	for r := range rails {
		if railTested[r] == 0 {
			continue
		}
		measured++
		o.RailBad[r] = float64(railBad[r]) / float64(railTested[r])
		if o.RailBad[r] >= railWide {
			o.BadRails = append(o.BadRails, r)
		}
	}
	if pairs > 0 {
		o.AllBad = float64(pairsBad) / float64(pairs)
	}
	switch {
	case pairs == 0:
		o.Why = "nothing tested yet"
	case pairsBad == 0:
		o.Why = "no pair is bad on any rail"
	case len(o.BadRails) == measured:
		o.Why = fmt.Sprintf("every rail is bad for at least %s of its pairs: the fault is fabric-wide, not one rail's", pct(railWide))
	// Some rails bad across the fabric, others not: each rail on its own
	// shows the healthy rails the worst-of-rails view paints over.
	case len(o.BadRails) > 0:
		o.View = "rails"
		o.Why = v.railsWhy(o)
	default:
		o.Why = fmt.Sprintf("%s of %s node pairs (%s) are bad on some rail; no rail is bad across the fabric",
			thousands(pairsBad), thousands(pairs), pct(o.AllBad))
	}
	return o
}

// railsWhy names the bad rails and, where one HCA index accounts for them,
// its device and on how many nodes it is bad.
func (v *view) railsWhy(o overview) string {
	rails := max(v.m.Rails, 0)
	var parts []string
	for _, r := range o.BadRails {
		s := fmt.Sprintf("rail %d is %s bad", r, pct(o.RailBad[r]))
		// Nodes whose HCA on r is bad for at least half its cells, and the
		// device name they share, if they do.
		devs := map[string]int{}
		nodes, tested := 0, 0
		for i := range v.n {
			t := v.hca[i*rails+r]
			if t.tested == 0 {
				continue
			}
			tested++
			if 2*t.bad >= t.tested {
				nodes++
				devs[v.device(i, r)]++
			}
		}
		if len(devs) == 1 {
			for d := range devs {
				if d != "" {
					s += fmt.Sprintf(" (%s on %s of %s nodes)", d, thousands(nodes), thousands(tested))
				}
			}
		}
		parts = append(parts, s)
	}
	return fmt.Sprintf("%s, so all rails at once would be %s bad: a solid block over the healthy rails",
		strings.Join(parts, "; "), pct(o.AllBad))
}

// device is the HCA of node i (m.Nodes index) on rail r, "" if unknown.
func (v *view) device(i, r int) string {
	for k, p := range v.m.Nodes[i].Ports {
		if p.Rail == r || (p.Rail < 0 && k == r) {
			return p.Device
		}
	}
	return ""
}

// pct formats a share for people: 100%, 37%, <1%, never a bad share as 0%.
func pct(x float64) string {
	switch {
	case x <= 0:
		return "0%"
	case x < 0.01:
		return "<1%"
	case x < 0.995:
		return fmt.Sprintf("%.0f%%", 100*x)
	case x < 1:
		return ">99%"
	}
	return "100%"
}

// thousands formats n as 1,047,552.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
