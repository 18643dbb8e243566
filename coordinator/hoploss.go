package coordinator

import (
	"cmp"
	"math"
	"slices"
)

// Hop loss: the flows of bad cells are traced with their hops probed many
// times, and the matrix names the link past which the answers thin out
// (matrix/hoploss.go). It is what tells two links that carried the same
// bad tests apart: with two leaves, every test leaf1 -> spine1 -> leaf2
// crosses both of that spine's links, and no end-to-end test can say
// which one drops.

// maxLossCells bounds the cells whose flows are probed for loss: a
// cell's two flows cost 2 x hops x probes probes (about 1,800 at the
// defaults, 4 s at the worker's pace), and a worker answers a request
// within a minute.
const maxLossCells = 8

// outlierFactor: a good cell whose bandwidth is below this fraction of
// its rail's traced cells' median, or whose p50 is that many times
// theirs, is probed for loss too. On a rail too noisy to judge cells by
// figures (an emulator's), a lossy link shows as such an outlier long
// before its tests fail.
const outlierFactor = 4

// markOutliers sets loss on up to room of cells (good ones, as traced)
// that lie far below their rail's median, the worst first.
func markOutliers(cells []traceCell, room int) {
	if room <= 0 || len(cells) == 0 {
		return
	}
	byRail := map[int][2][]float64{}
	for _, tc := range cells {
		v := byRail[tc.rail]
		if tc.gbps > 0 {
			v[0] = append(v[0], tc.gbps)
		}
		if tc.p50 > 0 {
			v[1] = append(v[1], tc.p50)
		}
		byRail[tc.rail] = v
	}
	med := map[int][2]float64{}
	for rail, v := range byRail {
		med[rail] = [2]float64{median(v[0]), median(v[1])}
	}
	// score: how many times worse than the median (1 = typical).
	score := make([]float64, len(cells))
	var order []int
	for i, tc := range cells {
		md := med[tc.rail]
		if tc.gbps > 0 && md[0] > 0 {
			score[i] = md[0] / tc.gbps
		}
		if tc.p50 > 0 && md[1] > 0 {
			score[i] = math.Max(score[i], tc.p50/md[1])
		}
		if score[i] >= outlierFactor {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(score[b], score[a]) })
	for _, i := range order[:min(room, len(order))] {
		cells[i].loss = true
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
