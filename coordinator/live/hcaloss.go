package live

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// A port that drops a few percent of its packets fails only some of its
// live cells in a window (a handful of probes each: 5 % loss leaves most
// with none lost), so the cell-level localization sees an HCA that is
// "fine with most peers" and lists a dozen weak pair suspects around it.
// Its probes, summed over every cell it sends or answers in, tell the
// truth: that HCA loses far more than the rail's other HCAs. lossyHCAs
// finds such HCAs; the analysis puts them first and drops the pair
// suspects they explain.

// hcaLossMinProbes is the probes an HCA's sum needs before it is judged:
// ten cells' worth.
const hcaLossMinProbes = 50

// hcaLossPeers is the distinct peers its failed cells must span: loss
// with one or two peers is a path, not the port.
const hcaLossPeers = 3

type hcaTally struct {
	answered, lost, cells, bad int
	peers                      map[int32]bool // peers of its failed cells
}

func (t *hcaTally) ratio() float64 {
	if n := t.answered + t.lost; n > 0 {
		return float64(t.lost) / float64(n)
	}
	return 0
}

// lossyHCAs adds an HCA suspect for every HCA whose probes, summed over
// its cells, are lost at LossFail or more and at four times the rail's
// median HCA, with failed cells towards at least hcaLossPeers peers,
// unless the cells already made it a suspect.
func (sn *snapshot) lossyHCAs(m *matrix.Matrix, nodes []matrix.Node, lossFail float64) {
	tallies := map[[2]int32]*hcaTally{} // (node, rail)
	get := func(node int32, rail uint8) *hcaTally {
		k := [2]int32{node, int32(rail)}
		t := tallies[k]
		if t == nil {
			t = &hcaTally{peers: map[int32]bool{}}
			tallies[k] = t
		}
		return t
	}
	for i := range sn.recs {
		r := &sn.recs[i]
		if r.class == probe.ClassPortDown {
			continue // the prober said why; its port is already the suspect
		}
		for _, end := range [2][2]int32{{r.src, r.dst}, {r.dst, r.src}} {
			t := get(end[0], r.rail)
			t.answered += int(r.answered)
			t.lost += int(r.lost)
			t.cells++
			if r.class != probe.ClassOK {
				t.bad++
				t.peers[end[1]] = true
			}
		}
	}
	byRail := map[int32][]float64{}
	for k, t := range tallies {
		if t.answered+t.lost >= hcaLossMinProbes {
			byRail[k[1]] = append(byRail[k[1]], t.ratio())
		}
	}
	var found []matrix.Suspect
	for k, t := range tallies {
		ratios := byRail[k[1]]
		if t.answered+t.lost < hcaLossMinProbes || len(t.peers) < hcaLossPeers || len(ratios) < 3 {
			continue
		}
		med := median(ratios)
		r := t.ratio()
		if r < lossFail || r < 4*med {
			continue
		}
		n := nodes[k[0]]
		if slices.ContainsFunc(m.Suspects, func(s matrix.Suspect) bool {
			return s.Kind == matrix.KindHCA && s.Node == n.Name && s.Rail == int(k[1])
		}) {
			continue // the cells already convicted it
		}
		dev := ""
		if int(k[1]) < len(n.Ports) {
			dev = n.Ports[k[1]].Device
		}
		found = append(found, matrix.Suspect{Kind: matrix.KindHCA, Node: n.Name, Device: dev, Rail: int(k[1]),
			Class: probe.ClassRetryExceeded, Verdict: matrix.VerdictFailed, Bad: t.bad, Total: t.cells,
			Confidence: min(1, 0.5+r/(2*max(lossFail, 4*med))),
			Reason: fmt.Sprintf("%s/%s lost %.1f%% of its %d live probes on rail %d, summed over the %d cells it sent or answered in (%d failed, towards %d peers), against a median of %.1f%% for the rail's HCAs: its port or link drops packets",
				n.Name, dev, 100*r, t.answered+t.lost, k[1], t.cells, t.bad, len(t.peers), 100*med),
			Fix: fmt.Sprintf("check %s %s: its cable or optics, its switch port's error and discard counters, and (RoCE) PFC/ECN on that port; `rdmamesh doctor` on %s shows the port's own counters", n.Name, dev, n.Name)})
	}
	if len(found) == 0 {
		return
	}
	slices.SortFunc(found, func(a, b matrix.Suspect) int {
		return cmp.Or(cmp.Compare(b.Confidence, a.Confidence), cmp.Compare(a.Node, b.Node), cmp.Compare(a.Rail, b.Rail))
	})
	// The pairs around a lossy HCA are its symptoms (an HCA suspect for it
	// was never added: see above).
	explained := func(s matrix.Suspect) bool {
		return s.Kind == matrix.KindPair && slices.ContainsFunc(found, func(f matrix.Suspect) bool {
			return s.Rail == f.Rail && (s.Node == f.Node || s.Peer == f.Node)
		})
	}
	rest := slices.DeleteFunc(slices.Clone(m.Suspects), explained)
	m.Suspects = append(found, rest...)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
