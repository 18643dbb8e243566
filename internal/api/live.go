package api

import "time"

// LiveID is the pseudo sweep id under which the always-on mesh's rolling
// matrix is served: /api/v1/sweeps/live/{matrix,grid,layer,pair} read it
// like a sweep's, so the heatmap needs no second code path.
const LiveID = "live"

// LiveInfo is GET /api/v1/live: the always-on mesh as the leader sees it.
type LiveInfo struct {
	// Enabled is false when live probing is off (live.enabled) or no
	// worker can probe (no fabric with probe ports).
	Enabled bool `json:"enabled"`
	// PlanID grows with every plan (membership or parameter change).
	PlanID uint64 `json:"plan_id"`
	// Members is how many nodes the plan probes; Probing how many of
	// them reported a window recently.
	Members int `json:"members"`
	Probing int `json:"probing"`
	// Window is the newest window folded into the matrix, WindowStart when
	// it began and WindowSeconds how long a window lasts.
	Window        int64     `json:"window"`
	WindowStart   time.Time `json:"window_start"`
	WindowSeconds float64   `json:"window_seconds"`
	// AgeSeconds is how long ago the newest folded window ended: a stale
	// live view says so instead of looking healthy.
	AgeSeconds float64 `json:"age_seconds"`
	// CoverageSeconds is the plan's worst case between two probes of one
	// same-rail pair; HorizonWindows how many windows a cell stays.
	CoverageSeconds float64 `json:"coverage_seconds"`
	HorizonWindows  int64   `json:"horizon_windows"`
	// RatePerHCA is the plan's probe cap per HCA, probes per second.
	RatePerHCA float64 `json:"rate_per_hca"`
	// Cells is how many directed cells the live matrix judged; Healthy and
	// Suspects summarise its verdict.
	Cells    int    `json:"cells"`
	Healthy  bool   `json:"healthy"`
	Suspects int    `json:"suspects"`
	Error    string `json:"error,omitempty"`
	// LinkFlows is how many steered link flows the plan probes (0: no
	// topology, so no link coverage); Links the cables they found losing
	// probes, one entry per episode, the newest first.
	LinkFlows int        `json:"link_flows"`
	Links     []LiveLink `json:"links,omitempty"`
	// TracedFlows is how many link flows were steered by traces (the
	// switches answer them) and are judged over their traced paths; with
	// any, the others are not judged until traced.
	TracedFlows int `json:"traced_flows"`
}

// LiveLink is one episode of a cable losing the live link flows' probes:
// from the window it was first named until it has stayed clean for the
// watch's quiet period. A cable that goes down and comes back within an
// episode adds a flap, not another episode.
type LiveLink struct {
	Cable string `json:"cable"` // its two ends, "leaf05:33 <-> spine02:5"
	// State is "down" (its flows lose nearly every probe), "lossy", or
	// "recovered" (clean again, the episode still open).
	State string `json:"state"`
	// Loss is the share of the probes through it lost over the newest
	// judged windows; Worst the highest Loss in the episode.
	Loss  float64 `json:"loss"`
	Worst float64 `json:"worst"`
	// Probes and Lost are the newest judgement's counts; Flows the link
	// flows through it that lost probes, Partners how many nodes those
	// flows ran between.
	Probes   int `json:"probes"`
	Lost     int `json:"lost"`
	Flows    int `json:"flows"`
	Partners int `json:"partners"`
	// Since is the window the episode began, LastBad the newest window it
	// was named in; Flaps how many times it went bad again after a clean
	// judgement within the episode.
	Since   int64 `json:"since_window"`
	LastBad int64 `json:"last_bad_window"`
	Flaps   int   `json:"flaps"`
}

// LiveRail is one rail's probing as the live matrix holds it, for
// /metrics: probe totals since the leader took over, the loss over the
// held cells, and the held cells' p50 round trips as histogram counts
// over LiveRTTBounds.
type LiveRail struct {
	Rail           int     `json:"rail"`
	ProbesAnswered uint64  `json:"probes_answered"`
	ProbesLost     uint64  `json:"probes_lost"`
	LossRatio      float64 `json:"loss_ratio"`
	Cells          int     `json:"cells"`
	BadCells       int     `json:"bad_cells"`
	// RTTBuckets[i] counts cells whose p50 round trip is <= LiveRTTBounds[i]
	// (cumulative, as Prometheus histograms are); RTTCount and RTTSumSeconds
	// cover every cell.
	RTTBuckets    []uint64 `json:"rtt_buckets,omitempty"`
	RTTCount      uint64   `json:"rtt_count"`
	RTTSumSeconds float64  `json:"rtt_sum_seconds"`
}

// LiveRTTBounds are the histogram bounds of live round trips, in seconds:
// 2 µs (a healthy leaf) to 100 ms (a path in trouble).
var LiveRTTBounds = []float64{2e-6, 4e-6, 8e-6, 16e-6, 32e-6, 64e-6, 128e-6, 256e-6, 512e-6, 1e-3, 4e-3, 16e-3, 100e-3}
