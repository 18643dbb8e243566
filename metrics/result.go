package metrics

import (
	"context"
	"strconv"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

var (
	verdicts = []matrix.Verdict{matrix.VerdictOK, matrix.VerdictFailed, matrix.VerdictSlowLatency,
		matrix.VerdictLowBandwidth, matrix.VerdictUntested}
	failureClasses = []probe.Class{probe.ClassPortDown, probe.ClassRetryExceeded, probe.ClassTimeout,
		probe.ClassPeerLost, probe.ClassInvalidGID, probe.ClassMTUMismatch, probe.ClassNoNetdev,
		probe.ClassResource, probe.ClassSkipped, probe.ClassInternal, probe.ClassTester, probe.ClassUnreachable}
	suspectKinds = []string{"hca", "node", "rail", "pair"}
)

// resultSummary derives every result metric from one finished sweep. Known
// label values are zero-filled so a dashboard shows 0 rather than "no data"
// on a healthy fabric. It stops with ctx's error when ctx ends during its
// walk of the cells; what it added is then partial.
func resultSummary(ctx context.Context, add adder, s api.SweepInfo, m *matrix.Matrix, o CoordinatorOptions) error {
	add(defResultInfo, 1, s.ID, s.Mode)
	add(defResultEnd, unixSeconds(s.Finished))
	if !s.Finished.IsZero() {
		add(defResultDuration, max(s.Finished.Sub(s.Started).Seconds(), 0))
	}
	add(defFabricHealthy, b2f(m.Healthy))

	for _, v := range verdicts {
		add(defCells, float64(m.Counts[v]), string(v))
	}
	// One walk of the figures feeds the class counts, the HCA rollups and
	// the worst pairs: a compact matrix (the coordinator's) regenerates no
	// reason for it.
	w := newCellWalk(m, o.WorstPairs)
	if err := w.walk(ctx); err != nil {
		return err
	}
	for cl, n := range w.classes {
		add(defFailedCells, float64(n), string(cl))
	}

	suspects(add, m.Suspects, o.TopSuspects)
	for _, r := range m.NodeRollups {
		rollup(add, r, defNodeCells, defNodeBad, defNodeLatency, defNodeBandwidth, r.Key)
		add(defNodeHealthy, b2f(r.Cells > 0 && r.OK == r.Cells), r.Key)
	}
	for i, r := range m.RailRollups {
		rollup(add, r, defRailCells, defRailBad, defRailLatency, defRailBandwidth, strconv.Itoa(i))
	}
	if !o.NoHCA {
		for _, h := range w.hcas {
			rail := strconv.Itoa(h.rail)
			add(defHCACells, float64(h.cells), h.node, h.device, rail)
			add(defHCABad, float64(h.bad), h.node, h.device, rail)
		}
	}
	w.worstPairs(add)
	return nil
}

func bad(r matrix.Rollup) int { return r.Failed + r.Slow + r.LowBandwidth }

func rollup(add adder, r matrix.Rollup, cells, badCells, lat, bw *def, label string) {
	add(cells, float64(r.Cells), label)
	add(badCells, float64(bad(r)), label)
	if r.P50Ns > 0 {
		add(lat, r.P50Ns/1e9, label)
	}
	if r.MinGbps > 0 {
		add(bw, gbpsToBytes(r.MinGbps), label)
	}
}

func gbpsToBytes(g float64) float64 { return g * 1e9 / 8 }

func suspects(add adder, ss []matrix.Suspect, k int) {
	byKind := map[string]int{}
	for _, kind := range suspectKinds {
		byKind[kind] = 0
	}
	for _, s := range ss {
		byKind[s.Kind]++
	}
	for kind, n := range byKind {
		add(defSuspects, float64(n), kind)
	}
	suspectSeries(add, defSuspect, ss, k)
}

// suspectSeries exports the k most implicated suspects' bad cells on d
// (the sweep's or the live mesh's family; both have the same labels).
func suspectSeries(add adder, d *def, ss []matrix.Suspect, k int) {
	// Two suspects can share every label (say, one pair blamed with two
	// verdicts folded into one); summing keeps the series unique.
	type key struct{ kind, node, device, rail, peer, verdict string }
	var order []key
	sum := map[key]int{}
	for _, s := range ss[:min(max(k, 0), len(ss))] {
		rail := strconv.Itoa(s.Rail)
		if s.Rail == matrix.AllRails {
			rail = "all"
		}
		kk := key{s.Kind, s.Node, s.Device, rail, s.Peer, string(s.Verdict)}
		if _, ok := sum[kk]; !ok {
			order = append(order, kk)
		}
		sum[kk] += s.Bad
	}
	for _, kk := range order {
		add(d, float64(sum[kk]), kk.kind, kk.node, kk.device, kk.rail, kk.peer, kk.verdict)
	}
}
