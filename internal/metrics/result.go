package metrics

import (
	"cmp"
	"slices"
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
		probe.ClassResource, probe.ClassSkipped, probe.ClassInternal, probe.ClassTester}
	suspectKinds = []string{"hca", "node", "rail", "pair"}
)

// resultSummary derives every result metric from one finished sweep. Known
// label values are zero-filled so a dashboard shows 0 rather than "no data"
// on a healthy fabric.
func resultSummary(add adder, s api.SweepInfo, m *matrix.Matrix, o CoordinatorOptions) {
	add(defResultInfo, 1, s.ID, s.Mode)
	add(defResultEnd, unixSeconds(s.Finished))
	if !s.Finished.IsZero() {
		add(defResultDuration, max(s.Finished.Sub(s.Started).Seconds(), 0))
	}
	add(defFabricHealthy, b2f(m.Healthy))

	for _, v := range verdicts {
		add(defCells, float64(m.Counts[v]), string(v))
	}
	classes := map[probe.Class]int{}
	for _, cl := range failureClasses {
		classes[cl] = 0
	}
	// EachCell reads a compact analysis (the coordinator's) cell by cell.
	m.EachCell(func(_ int, c *matrix.Result) error {
		if cl := c.Class; cl != "" && cl != probe.ClassOK {
			classes[cl]++
		}
		return nil
	})
	for cl, n := range classes {
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
		hcas(add, m)
	}
	worstPairs(add, m, o.WorstPairs)
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

// hcas rolls cells up per (node, rail): an HCA is an endpoint of every cell
// it initiates or answers.
func hcas(add adder, m *matrix.Matrix) {
	type hca struct {
		node   string
		rail   int
		device string
		cells  int
		bad    int
	}
	ports := make(map[string][]probe.Port, len(m.Nodes))
	for _, n := range m.Nodes {
		ports[n.Name] = n.Ports
	}
	idx := map[string]int{}
	var list []hca
	touch := func(node string, rail int, device string, isBad bool) {
		k := node + "\x00" + strconv.Itoa(rail)
		i, ok := idx[k]
		if !ok {
			i = len(list)
			idx[k] = i
			// The inventory names the HCA even for an untested cell, which
			// carries no device.
			dev := ""
			if p := ports[node]; rail >= 0 && rail < len(p) {
				dev = p[rail].Device
			}
			list = append(list, hca{node: node, rail: rail, device: dev})
		}
		h := &list[i]
		if h.device == "" {
			h.device = device
		}
		h.cells++
		if isBad {
			h.bad++
		}
	}
	m.EachCell(func(_ int, c *matrix.Result) error {
		isBad := c.Verdict == matrix.VerdictFailed || c.Verdict == matrix.VerdictSlowLatency ||
			c.Verdict == matrix.VerdictLowBandwidth
		touch(c.Src, c.Rail, c.SrcDevice, isBad)
		touch(c.Dst, c.Rail, c.DstDevice, isBad)
		return nil
	})
	for _, h := range list {
		rail := strconv.Itoa(h.rail)
		add(defHCACells, float64(h.cells), h.node, h.device, rail)
		add(defHCABad, float64(h.bad), h.node, h.device, rail)
	}
}

// worstPairs exports the k slowest cells by p50 (with their p99) and the k
// narrowest by bandwidth. Ties break by rail, src, dst so the exported set
// is stable from scrape to scrape.
func worstPairs(add adder, m *matrix.Matrix, k int) {
	if k <= 0 {
		return
	}
	order := func(a, b *matrix.Result) int {
		return cmp.Or(cmp.Compare(a.Rail, b.Rail), cmp.Compare(a.Src, b.Src), cmp.Compare(a.Dst, b.Dst))
	}
	byLat := func(a, b *matrix.Result) int {
		return cmp.Or(cmp.Compare(b.Latency.P50Ns, a.Latency.P50Ns), order(a, b))
	}
	byBW := func(a, b *matrix.Result) int {
		return cmp.Or(cmp.Compare(a.Bandwidth.Gbps, b.Bandwidth.Gbps), order(a, b))
	}
	// Candidates are copies (a compact matrix reuses its Result), kept to
	// the best k whenever they pass a few k, so a sweep of millions of
	// cells holds only a few hundred.
	var lat, bw []*matrix.Result
	keep := func(xs []*matrix.Result, c *matrix.Result, by func(a, b *matrix.Result) int) []*matrix.Result {
		xs = append(xs, c)
		if len(xs) >= 4*k+64 {
			slices.SortFunc(xs, by)
			xs = xs[:k]
		}
		return xs
	}
	m.EachCell(func(_ int, r *matrix.Result) error {
		hasLat := r.Latency != nil && r.Latency.Samples > 0
		hasBW := r.Bandwidth != nil && r.Bandwidth.Gbps > 0
		if hasLat || hasBW {
			c := new(matrix.Result)
			*c = *r
			if hasLat {
				lat = keep(lat, c, byLat)
			}
			if hasBW {
				bw = keep(bw, c, byBW)
			}
		}
		return nil
	})
	slices.SortFunc(lat, byLat)
	slices.SortFunc(bw, byBW)
	for _, c := range lat[:min(k, len(lat))] {
		rail := strconv.Itoa(c.Rail)
		add(defPairLatency, c.Latency.P50Ns/1e9, c.Src, c.Dst, rail)
		add(defPairLatencyP99, c.Latency.P99Ns/1e9, c.Src, c.Dst, rail)
	}
	for _, c := range bw[:min(k, len(bw))] {
		add(defPairBandwidth, gbpsToBytes(c.Bandwidth.Gbps), c.Src, c.Dst, strconv.Itoa(c.Rail))
	}
}
