package matrix

import (
	"fmt"
	"math"
)

// rollTally counts one rollup's cells by verdict index and keeps its
// lowest Gb/s; the caller takes the p50 median (which one dead-slow cell
// cannot drag the way it drags a mean) from the cells' p50s. key orders
// equal minima as one goroutine walking the cells would meet them, so a 0
// and a -0 Gb/s cell give the same output on any number of cores.
type rollTally struct {
	n       [len(allVerdicts)]int
	minG    float64
	minKey  int
	hasMinG bool
}

func (t *rollTally) add(v uint8, g float64, key int) {
	t.n[v]++
	if math.IsNaN(g) {
		return
	}
	if !t.hasMinG || g < t.minG || (g == t.minG && key < t.minKey) {
		t.minG, t.minKey, t.hasMinG = g, key, true
	}
}

// merge adds u's cells to t. A minimum is the least Gb/s, then the least
// key, whichever order the cells came in; among equal keys (a rail's
// tally) the one merged first wins, as the one added first does.
func (t *rollTally) merge(u *rollTally) {
	for i, n := range u.n {
		t.n[i] += n
	}
	if u.hasMinG && (!t.hasMinG || u.minG < t.minG || (u.minG == t.minG && u.minKey < t.minKey)) {
		t.minG, t.minKey, t.hasMinG = u.minG, u.minKey, true
	}
}

func (t *rollTally) rollup(key string, p50 float64) Rollup {
	r := Rollup{Key: key, OK: t.n[0], Failed: t.n[1], Slow: t.n[2], LowBandwidth: t.n[3], Untested: t.n[4], P50Ns: p50}
	for _, n := range t.n {
		r.Cells += n
	}
	if t.hasMinG {
		r.MinGbps = t.minG
	}
	return r
}

func railKey(r int) string { return fmt.Sprintf("rail-%d", r) }
