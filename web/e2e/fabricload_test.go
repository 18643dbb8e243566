//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/topology"
)

// shareBand is the Fabric view's colour step for a share of bad tests, as
// its legend gives it: 0 no bad test, 1 under 1 %, 2 under 5 %, 3 under
// 20 %, 4 the rest.
func shareBand(share float64) int {
	switch {
	case share <= 0:
		return 0
	case share < 0.01:
		return 1
	case share < 0.05:
		return 2
	case share < 0.2:
		return 3
	}
	return 4
}

// worseLoads is each cable's worse direction among the matrix's loads.
func worseLoads(loads []matrix.LinkLoad) map[int]matrix.LinkLoad {
	out := map[int]matrix.LinkLoad{}
	for _, l := range loads {
		if w, ok := out[l.Cable]; !ok || l.Share > w.Share {
			out[l.Cable] = l
		}
	}
	return out
}

// shareLine is what the view says of a load when a cable is hovered.
func shareLine(l matrix.LinkLoad) string {
	return fmt.Sprintf("%d of ~%d tests through it were bad", l.Bad, int(math.Round(l.Tests)))
}

// drawnShares is what the Fabric view coloured: the cables of each band's
// path and each leaf bar's band, by switch index.
type drawnShares struct {
	Bands  map[string]string `json:"bands"` // "load-N" -> its cables, space-separated
	Bars   map[string]string `json:"bars"`  // switch -> its bar's class
	Legend string            `json:"legend"`
}

// checkLinkShares: with rail 0 shown, every cable between two switches is
// drawn in the band of its worse direction's share of bad tests (in none
// without a bad test), every leaf's host bar in its worst host cable's,
// and the legend names the bands; the dead cable is in the top band and
// its leaf's least loaded other uplink, the healthy sibling, is not.
func checkLinkShares(t *testing.T, ctx context.Context, topo *topology.Topology, sweep string, loads []matrix.LinkLoad, dead int) {
	t.Helper()
	worse := worseLoads(loads)
	if shareBand(worse[dead].Share) != 4 {
		t.Fatalf("the dead cable's worse share is %+v; the top band needs 20%%", worse[dead])
	}
	deadLeaf := topo.Cables[dead].A.Switch
	sibling, leafBars := -1, map[int]int{} // leaf switch -> band of its worst host cable
	for c, cb := range topo.Cables {
		if cb.A.IsHCA() || cb.B.IsHCA() {
			if sw := max(cb.A.Switch, cb.B.Switch); topo.Switches[sw].Plane == 0 {
				leafBars[sw] = max(leafBars[sw], shareBand(worse[c].Share))
			}
			continue
		}
		if c != dead && cb.A.Switch == deadLeaf && (sibling < 0 || worse[c].Share < worse[sibling].Share) {
			sibling = c
		}
	}
	if sibling < 0 || shareBand(worse[sibling].Share) == 4 {
		t.Fatalf("every other uplink of %s is in the top band too: nothing for the dead cable to stand out from", topo.Switches[deadLeaf].Name)
	}
	t.Logf("the dead cable: %+v; its healthy sibling %s: %+v", worse[dead], topo.CableName(sibling), worse[sibling])

	got := poll[drawnShares](t, ctx, "the link shares drawn", `(() => {
		const f = window.rdmamesh.fabric, bands = {}, bars = {};
		if (f.loads.sweep !== "`+sweep+`" || !f.loads.n) return false;
		for (const p of document.querySelectorAll("#fabric-svg path.loads")) bands[p.classList[1]] = p.dataset.cables;
		for (const b of document.querySelectorAll("#fabric-svg rect.hosts")) bars[b.dataset.hosts] = b.getAttribute("class");
		return Object.keys(bands).length && {bands, bars, legend: document.getElementById("fabric-load-legend").textContent}; })()`)
	drawn := map[int]int{} // cable -> band drawn
	for name, cables := range got.Bands {
		b, err := strconv.Atoi(strings.TrimPrefix(name, "load-"))
		if err != nil {
			t.Fatalf("a band path of class %q", name)
		}
		for _, f := range strings.Fields(cables) {
			c, _ := strconv.Atoi(f)
			drawn[c] = b
		}
	}
	if drawn[dead] != 4 || drawn[sibling] == 4 {
		t.Errorf("the dead cable is drawn in band %d, its sibling %s in band %d; want 4 and not 4", drawn[dead], topo.CableName(sibling), drawn[sibling])
	}
	for c, cb := range topo.Cables {
		if cb.A.IsHCA() || cb.B.IsHCA() || topo.Switches[cb.A.Switch].Plane != 0 {
			continue
		}
		if want := shareBand(worse[c].Share); drawn[c] != want {
			t.Errorf("%s drawn in band %d; its worse share %+v is band %d", topo.CableName(c), drawn[c], worse[c], want)
		}
	}
	for sw, want := range leafBars {
		class := got.Bars[strconv.Itoa(sw)]
		hasBand := func(b int) bool { return slices.Contains(strings.Fields(class), "load-"+strconv.Itoa(b)) }
		if (want == 0 && slices.ContainsFunc([]int{1, 2, 3, 4}, hasBand)) || (want > 0 && !hasBand(want)) {
			t.Errorf("%s's host bar has class %q; its worst host cable is band %d", topo.Switches[sw].Name, class, want)
		}
	}
	for _, label := range []string{"< 1%", "1–5%", "5–20%", "≥ 20%"} {
		if !strings.Contains(got.Legend, label) {
			t.Errorf("legend %q lacks the band %q", got.Legend, label)
		}
	}
}

// everyCableLoaded is a load on one direction of every cable of topo: the
// most a plane can have to draw. Most carry a few scattered bad tests, one
// in 50 a twentieth, one in 500 a tenth, one in 2,000 most, as a fabric
// with a few bad links and some noise would.
func everyCableLoaded(topo *topology.Topology) []matrix.LinkLoad {
	out := make([]matrix.LinkLoad, len(topo.Cables))
	for c, cb := range topo.Cables {
		share := 0.004
		switch {
		case c%2000 == 0:
			share = 0.6
		case c%500 == 0:
			share = 0.1
		case c%50 == 0:
			share = 0.02
		}
		bad := 1 + c%5
		out[c] = matrix.LinkLoad{Cable: c, From: topo.EndName(cb.A), To: topo.EndName(cb.B), Bad: bad, Tests: float64(bad) / share, Share: share}
	}
	return out
}
