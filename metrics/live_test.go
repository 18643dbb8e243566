package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

type fakeLive struct {
	m     *matrix.Matrix
	info  api.LiveInfo
	on    bool
	rails []api.LiveRail
}

func (f *fakeLive) Live() (*matrix.Matrix, api.LiveInfo, bool) { return f.m, f.info, f.on }
func (f *fakeLive) LiveRails() []api.LiveRail                  { return f.rails }

// standardLive serves the standard fabric as the live matrix: n3's rail 1
// silent, so the live suspect is its HCA.
func standardLive() *fakeLive {
	m := standardFabric().build()
	return &fakeLive{m: m, on: true,
		info: api.LiveInfo{Enabled: true, PlanID: 3, Members: 4, Probing: 4, Window: 17, AgeSeconds: 4, Healthy: m.Healthy,
			Suspects: len(m.Suspects), Cells: 24, LinkFlows: 16,
			Links: []api.LiveLink{{Cable: "leaf1:3 <-> spine0:2", State: "lossy", Loss: 0.021, Flaps: 2}}},
		rails: []api.LiveRail{
			{Rail: 0, ProbesAnswered: 1200, Cells: 12, RTTBuckets: []uint64{0, 10, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12},
				RTTCount: 12, RTTSumSeconds: 12 * 3e-6},
			{Rail: 1, ProbesAnswered: 600, ProbesLost: 600, LossRatio: 0.5, Cells: 12, BadCells: 6},
		}}
}

func TestLiveCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewLive(standardLive(), 0))
	fams := families(t, reg)
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"rdmamesh_live_enabled", nil, 1},
		{"rdmamesh_live_healthy", nil, 0},
		{"rdmamesh_live_window", nil, 17},
		{"rdmamesh_live_window_age_seconds", nil, 4},
		{"rdmamesh_live_members", []string{"state=probing"}, 4},
		{"rdmamesh_live_loss_ratio", []string{"rail=1"}, 0.5},
		{"rdmamesh_live_bad_cells", []string{"rail=1"}, 6},
		{"rdmamesh_live_probes_total", []string{"rail=1", "result=lost"}, 600},
		{"rdmamesh_live_rtt_seconds", []string{"rail=0"}, 12},
		{"rdmamesh_live_suspect_bad_cells", []string{"kind=hca", "node=n3", "rail=1"}, 6},
		{"rdmamesh_live_link_flows", nil, 16},
		{"rdmamesh_live_cable_loss_ratio", []string{"cable=leaf1:3 <-> spine0:2", "state=lossy"}, 0.021},
		{"rdmamesh_live_cable_flaps", []string{"cable=leaf1:3 <-> spine0:2"}, 2},
	} {
		if got := value(t, fams, tc.name, tc.labels...); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
}

// A follower, or a coordinator with live probing off, says so in one
// series and exports nothing else about the mesh.
func TestLiveCollectorOff(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewLive(&fakeLive{}, 0))
	fams := families(t, reg)
	if got := value(t, fams, "rdmamesh_live_enabled"); got != 0 {
		t.Errorf("rdmamesh_live_enabled = %v, want 0", got)
	}
	if len(fams) != 1 {
		t.Errorf("exported %d families with the mesh off, want only rdmamesh_live_enabled", len(fams))
	}
}
