// Package matrix turns directional per-rail measurements into a fabric
// verdict: cells, rollups, suspects and exports. It is pure: no I/O besides
// the io.Writer handed to an exporter, no clocks, no goroutines.
package matrix

import "github.com/rdmamesh/rdmamesh/internal/probe"

// Node is one worker as the sweep saw it.
type Node struct {
	Name   string            `json:"name"`
	State  string            `json:"state"` // alive | suspect | dead | left
	Labels map[string]string `json:"labels,omitempty"`
	Ports  []probe.Port      `json:"ports"` // index = rail
}

// Cell is one directional measurement: row Src (initiator), column Dst, on
// Rail. Class ok means it measured; anything else says why not.
type Cell struct {
	Src       string           `json:"src"`
	Dst       string           `json:"dst"`
	Rail      int              `json:"rail"`
	SrcDevice string           `json:"src_device"`
	DstDevice string           `json:"dst_device"`
	Round     int              `json:"round"`
	Class     probe.Class      `json:"class"`
	Error     *probe.Error     `json:"error,omitempty"`
	Latency   *probe.Latency   `json:"latency,omitempty"`
	Bandwidth *probe.Bandwidth `json:"bandwidth,omitempty"`
}

// Verdict is the matrix's judgement of one cell.
type Verdict string

const (
	VerdictOK           Verdict = "ok"
	VerdictFailed       Verdict = "failed"        // the test did not complete (Class != ok)
	VerdictSlowLatency  Verdict = "slow-latency"  // p50 > LatencyFactor x population min
	VerdictLowBandwidth Verdict = "low-bandwidth" // < BandwidthFraction x population max
	VerdictUntested     Verdict = "untested"      // no measurement recorded (yet)
)

// Thresholds are the v0 rules, after NVIDIA ClusterKit.
type Thresholds struct {
	LatencyFactor     float64 `json:"latency_factor"`     // default 2.1
	BandwidthFraction float64 `json:"bandwidth_fraction"` // default 0.93
}

// Result is a cell with its verdict.
type Result struct {
	Cell
	Verdict Verdict `json:"verdict"`
	Reason  string  `json:"reason,omitempty"`
}

// Rollup summarises the cells touching one node (as row or column) or one rail.
type Rollup struct {
	Key          string  `json:"key"` // node name, or "rail-N"
	Cells        int     `json:"cells"`
	OK           int     `json:"ok"`
	Failed       int     `json:"failed"`
	Slow         int     `json:"slow"`
	LowBandwidth int     `json:"low_bandwidth"`
	Untested     int     `json:"untested"`
	P50Ns        float64 `json:"p50_ns"`   // median of cell p50s
	MinGbps      float64 `json:"min_gbps"` // worst measured bandwidth
}

// AllRails is the Rail of a suspect that spans every rail of its node (kind
// node). It is negative so nobody mistakes it for rail 0.
const AllRails = -1

// Suspect is a component the matrix blames, with the evidence.
type Suspect struct {
	Kind     string      `json:"kind"` // hca | node | rail | pair
	Node     string      `json:"node,omitempty"`
	Device   string      `json:"device,omitempty"`
	Rail     int         `json:"rail"`
	Peer     string      `json:"peer,omitempty"` // for kind pair
	Class    probe.Class `json:"class,omitempty"`
	Reason   string      `json:"reason"`
	Fix      string      `json:"fix,omitempty"`
	Bad      int         `json:"bad"`   // cells that implicate it
	Total    int         `json:"total"` // cells it took part in
	Evidence string      `json:"evidence,omitempty"`
	// Verdict is the dominant verdict of the implicated cells. Class alone
	// cannot say "slow" or "low bandwidth": those cells measured (class ok).
	Verdict Verdict `json:"verdict,omitempty"`
}

// Matrix is the analysed sweep.
type Matrix struct {
	Nodes       []Node          `json:"nodes"`
	Rails       int             `json:"rails"`
	Thresholds  Thresholds      `json:"thresholds"`
	Cells       []Result        `json:"cells"` // every (src != dst, rail), sorted by rail, src, dst
	Counts      map[Verdict]int `json:"counts"`
	NodeRollups []Rollup        `json:"node_rollups"`
	RailRollups []Rollup        `json:"rail_rollups"`
	Suspects    []Suspect       `json:"suspects"` // most implicated first
	Healthy     bool            `json:"healthy"`
	// Ignored counts input cells Build could not place: an unknown node,
	// src == dst, or a rail outside 0..maxRails-1. Non-zero means the caller
	// fed cells from another membership view; worth a log line, not a panic.
	Ignored int `json:"ignored,omitempty"`
}
