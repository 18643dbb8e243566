package matrix

import (
	"math"

	"github.com/rdmamesh/rdmamesh/topology"
)

// LinkLoad is one direction of a cable that bad tests crossed, with the
// tests through it as link localization counts them (links.go): Bad
// exactly, over the bad cells' routed paths, Tests in expectation. It is
// the evidence a suspect is chosen from, for every link, so a view can
// show where the bad tests went and not only what was named.
type LinkLoad struct {
	// Cable is the cable's index in the topology the sweep was analysed
	// on; From and To name its ends the way Suspect.Ends does, From the
	// end the traffic left from, so a reader holding another version of
	// the topology can find the cable again.
	Cable int    `json:"cable"`
	From  string `json:"from"`
	To    string `json:"to"`
	Bad   int    `json:"bad"`
	// Tests is never below Bad: a link's flows can load it beyond its
	// equal share, and a share over 1 would mean nothing.
	Tests float64 `json:"tests"`
	Share float64 `json:"share"` // Bad / Tests
}

// loads lists the directed links at least one bad cell crossed, by cable
// and A→B first. Only those: a bad cell crosses a handful of links, so the
// list grows with the faults and not with the fabric. It must run before
// choose, which takes the explained cells out of bL.
func (ls *linkScan) loads() []LinkLoad {
	var out []LinkLoad
	for i, b := range ls.bL {
		if b == 0 {
			continue
		}
		lk := topology.Link(i)
		tests := math.Max(ls.tL[i], float64(b))
		out = append(out, LinkLoad{
			Cable: lk.Cable(),
			From:  ls.t.EndName(ls.t.LinkFrom(lk)),
			To:    ls.t.EndName(ls.t.LinkTo(lk)),
			Bad:   b,
			// A tenth of a test and a hundredth of a percent: finer is
			// noise of the expectation, and the list is read by people.
			Tests: math.Round(tests*10) / 10,
			Share: math.Round(float64(b)/tests*1e4) / 1e4,
		})
	}
	return out
}
