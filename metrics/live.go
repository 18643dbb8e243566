package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// The always-on mesh's families. Series stay bounded: per rail, plus the
// K most implicated suspects, never per pair (a 1,024 x 8 mesh probes
// millions of them).
var (
	defLiveEnabled = newDef(Spec{Name: "rdmamesh_live_enabled", Type: typeGauge, Role: "coordinator", Series: "1",
		Help: "1 when this replica runs the live mesh (the raft leader with live probing on), else 0."})
	defLiveHealthy = newDef(Spec{Name: "rdmamesh_live_healthy", Type: typeGauge, Role: "coordinator", Series: "1",
		Help: "1 when every cell the live mesh judged recently is ok."})
	defLiveWindow = newDef(Spec{Name: "rdmamesh_live_window", Type: typeGauge, Role: "coordinator", Series: "1",
		Help: "The newest probe window folded into the live matrix."})
	defLiveAge = newDef(Spec{Name: "rdmamesh_live_window_age_seconds", Type: typeGauge, Role: "coordinator", Series: "1",
		Help: "Seconds since the newest folded window ended; it grows when probing or collection stops."})
	defLiveMembers = newDef(Spec{Name: "rdmamesh_live_members", Type: typeGauge, Role: "coordinator", Series: "2",
		Labels: []string{"state"}, Help: "Nodes in the probe plan (state=planned) and those that reported a recent window (state=probing)."})
	defLiveCells = newDef(Spec{Name: "rdmamesh_live_cells", Type: typeGauge, Role: "coordinator", Series: "one per rail",
		Labels: []string{"rail"}, Help: "Directed cells the live matrix judged on the rail."})
	defLiveBad = newDef(Spec{Name: "rdmamesh_live_bad_cells", Type: typeGauge, Role: "coordinator", Series: "one per rail",
		Labels: []string{"rail"}, Help: "Live cells on the rail that failed (silent or lossy paths)."})
	defLiveProbes = newDef(Spec{Name: "rdmamesh_live_probes_total", Type: typeCounter, Role: "coordinator",
		Series: "two per rail", Labels: []string{"rail", "result"},
		Help: "Live probes with a known fate, result answered or lost, since this replica became leader."})
	defLiveLoss = newDef(Spec{Name: "rdmamesh_live_loss_ratio", Type: typeGauge, Role: "coordinator", Series: "one per rail",
		Labels: []string{"rail"}, Help: "Lost over judged probes on the rail, over the cells the live matrix holds."})
	defLiveRTT = newDef(Spec{Name: "rdmamesh_live_rtt_seconds", Type: typeHistogram, Role: "coordinator",
		Series: "one histogram per rail", Labels: []string{"rail"},
		Help: "The live cells' median probe round trips on the rail (one observation per cell held)."})
	defLiveSuspect = newDef(Spec{Name: "rdmamesh_live_suspect_bad_cells", Type: typeGauge, Role: "coordinator",
		Labels: []string{"kind", "node", "device", "rail", "peer", "verdict"}, Series: "at most K (TopSuspects, default 20)",
		Help: "Bad live cells implicating each of the K most implicated live suspects; rail is \"all\" for a node suspect."})

	defLiveLinkFlows = newDef(Spec{Name: "rdmamesh_live_link_flows", Type: typeGauge, Role: "coordinator", Series: "1",
		Help: "Steered link flows the live plan probes, so that every cable between switches is crossed both ways (0: no RoCE topology)."})
	defLiveCableLoss = newDef(Spec{Name: "rdmamesh_live_cable_loss_ratio", Type: typeGauge, Role: "coordinator",
		Labels: []string{"cable", "state"}, Series: "one per open episode",
		Help: "Share of the link flows' probes lost through a cable the live mesh named (state down, lossy or recovered), newest judgement; the series lasts while its episode is open."})
	defLiveCableFlaps = newDef(Spec{Name: "rdmamesh_live_cable_flaps", Type: typeGauge, Role: "coordinator",
		Labels: []string{"cable"}, Series: "one per open episode",
		Help: "Times a named cable went bad again after a clean window, within its episode."})

	liveDefs = []*def{defLiveEnabled, defLiveHealthy, defLiveWindow, defLiveAge, defLiveMembers, defLiveCells, defLiveBad,
		defLiveProbes, defLiveLoss, defLiveRTT, defLiveSuspect, defLiveLinkFlows, defLiveCableLoss, defLiveCableFlaps}
)

// LiveSource is what the live collector reads at scrape time; the
// coordinator implements it.
type LiveSource interface {
	// Live is the live matrix and its header; false when this replica
	// runs no live mesh (a follower, or live probing off).
	Live() (*matrix.Matrix, api.LiveInfo, bool)
	// LiveRails is each rail's probing, rails in order.
	LiveRails() []api.LiveRail
}

// Live is a prometheus.Collector over a LiveSource.
type Live struct {
	src         LiveSource
	topSuspects int
}

var _ prometheus.Collector = (*Live)(nil)

// NewLive returns a collector exporting topSuspects suspects (0: 20).
func NewLive(src LiveSource, topSuspects int) *Live {
	if topSuspects == 0 {
		topSuspects = 20
	}
	return &Live{src: src, topSuspects: topSuspects}
}

func (l *Live) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range liveDefs {
		ch <- d.desc
	}
}

func (l *Live) Collect(ch chan<- prometheus.Metric) {
	add := func(d *def, v float64, labels ...string) { ch <- d.metric(v, labels...) }
	m, info, ok := l.src.Live()
	add(defLiveEnabled, b2f(ok && info.Enabled))
	if !ok || !info.Enabled {
		return
	}
	add(defLiveHealthy, b2f(info.Healthy))
	add(defLiveWindow, float64(info.Window))
	add(defLiveAge, info.AgeSeconds)
	add(defLiveMembers, float64(info.Members), "planned")
	add(defLiveMembers, float64(info.Probing), "probing")
	for _, r := range l.src.LiveRails() {
		rail := strconv.Itoa(r.Rail)
		add(defLiveCells, float64(r.Cells), rail)
		add(defLiveBad, float64(r.BadCells), rail)
		add(defLiveProbes, float64(r.ProbesAnswered), rail, "answered")
		add(defLiveProbes, float64(r.ProbesLost), rail, "lost")
		add(defLiveLoss, r.LossRatio, rail)
		buckets := make(map[float64]uint64, len(api.LiveRTTBounds))
		for i, b := range api.LiveRTTBounds {
			if i < len(r.RTTBuckets) {
				buckets[b] = r.RTTBuckets[i]
			}
		}
		ch <- prometheus.MustNewConstHistogram(defLiveRTT.desc, r.RTTCount, r.RTTSumSeconds, buckets, rail)
	}
	if m != nil {
		suspectSeries(add, defLiveSuspect, m.Suspects, l.topSuspects)
	}
	add(defLiveLinkFlows, float64(info.LinkFlows))
	for _, c := range info.Links {
		add(defLiveCableLoss, c.Loss, c.Cable, c.State)
		add(defLiveCableFlaps, float64(c.Flaps), c.Cable)
	}
}
