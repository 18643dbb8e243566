// Package matrix turns directional per-rail measurements into a fabric
// verdict: cells, rollups, suspects and exports. It is pure: no I/O besides
// the io.Writer handed to an exporter, no clocks, no goroutines.
//
// Why one package of ~5.7k lines rather than several: the analysis is one
// pipeline over shared unexported state (a verdict byte per cell, per-rail
// population statistics, the read-once passes, the rail spans localization
// walks), and every export regenerates cells from that state. Splitting
// verdicts, localization and exports into packages would export that state
// as API, which is what keeps a cell at about a byte; the files are split
// by role instead (README.md lists them).
package matrix

import "github.com/rdmamesh/rdmamesh/internal/probe"

// Node is one worker as the sweep saw it.
type Node struct {
	Name   string            `json:"name"`
	State  string            `json:"state"` // alive | suspect | dead | left
	Labels map[string]string `json:"labels,omitempty"`
	Ports  []probe.Port      `json:"ports"` // index = rail
	// Counters are the ports' counter deltas over the sweep, for the
	// ports whose counters moved (none on a healthy fabric).
	Counters []PortCounters `json:"counters,omitempty"`
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
	// DstRail is the destination's rail when it is not Rail (cross-rail
	// sweeps: Src's HCA on Rail to Dst's HCA on *DstRail); nil = same rail.
	DstRail *int `json:"dst_rail,omitempty"`
	// Flow is what chose the test's path where several are equal: the
	// initiator QP's RoCE v2 UDP source port (0 = unknown). With a
	// topology it resolves the cell to the links it crossed.
	Flow uint16 `json:"flow,omitempty"`
	// BackFlow is the responder QP's UDP source port: its pongs and the
	// acknowledgements come back over the path it picks.
	BackFlow uint16 `json:"back_flow,omitempty"`
	// Retests are the confirmation measurements of this cell, oldest first;
	// the fields above are the first measurement.
	Retests []Attempt `json:"retests,omitempty"`
	// LatencyCodes is Latency as the 16-bit codes the coordinator's store
	// keeps (internal/wire's quantisation) when the worker sent it so, and
	// Latency holds what they decode to: the leader records them as they
	// came instead of quantising Latency again. Only a leader's cells,
	// between a worker's answer and its round's commit, have it.
	LatencyCodes *[7]uint16 `json:"-"`
}

// Attempt is one confirmation measurement of a cell.
type Attempt struct {
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

// Thresholds decide which measured cells are bad. The first two are the
// population rules (NVIDIA ClusterKit's); every other field is a rule that
// a zero value turns off, so a saved Thresholds that lacks a field judges
// without that rule. Start from DefaultThresholds() and change fields: a
// completely zero Thresholds means "the defaults", a partly set one does not
// switch on the line-rate rule by itself. README.md explains each rule.
//
// Thresholds stays comparable (no maps or slices): callers test it against
// the zero value.
type Thresholds struct {
	LatencyFactor     float64 `json:"latency_factor"`     // p50 > this x the rail's minimum p50; default 2.1
	BandwidthFraction float64 `json:"bandwidth_fraction"` // Gb/s < this x the rail's maximum; default 0.93

	// LineRateFraction flags a cell whose Gb/s is under this share of the
	// slower end's port rate (Node.Ports[rail].RateGbps). 0.9 in the
	// defaults, like ngc_multinode_perf; 0 = off.
	LineRateFraction float64 `json:"line_rate_fraction,omitempty"`
	// TailFactor flags a cell whose p99 is over this many times its rail's
	// median p99: one node's tail stalls every collective it is part of,
	// while its p50 can look fine. 5 in the defaults; 0 = off.
	TailFactor float64 `json:"tail_factor,omitempty"`
	// RobustZ flags a cell whose p50 or p99 lies more than this many robust
	// standard deviations (1.4826 x MAD) above its rail's median, or whose
	// Gb/s lies that far below. 0 = off; 5 to 8 are sensible.
	RobustZ float64 `json:"robust_z,omitempty"`
	// QuietSpread, MaxSpread and OutlierZ judge a rail by its own noise
	// (spread.go): a rail whose healthy figures vary by at most QuietSpread
	// (robust SD in log space; 0.05 in the defaults) gets the fixed rules
	// above; up to MaxSpread (0.5) a cell must also lie OutlierZ (4) noise
	// SDs from the rail's median, and a node's cells on one side are
	// judged together; beyond MaxSpread no cell is judged slow or short on
	// its own. A QuietSpread of 100 keeps the fixed rules on every rail.
	QuietSpread float64 `json:"quiet_spread,omitempty"`
	MaxSpread   float64 `json:"max_spread,omitempty"`
	OutlierZ    float64 `json:"outlier_z,omitempty"`
	// ExcludeConfidence is the confidence a suspect needs to take nodes
	// out of a job (Excluded, the gate's exclude list and host file): 0.5
	// in the defaults (also when 0); a weaker suspect is reported, never
	// acted on.
	ExcludeConfidence float64 `json:"exclude_confidence,omitempty"`

	// Absolute limits, independent of the population. 0 = off.
	MaxP99Ns float64 `json:"max_p99_ns,omitempty"`
	MinGbps  float64 `json:"min_gbps,omitempty"`

	// Baseline compares each cell with the same cell of an earlier, good
	// sweep. nil = off. BaselineLatency is the p50 growth allowed (0.10 =
	// +10%), BaselineBandwidth the Gb/s drop allowed (0.05 = -5%); with a
	// Baseline and both zero, +10% and -5% apply.
	Baseline          *Baseline `json:"-"`
	BaselineName      string    `json:"baseline,omitempty"` // Baseline.Name, kept in the JSON when the pointer is not
	BaselineLatency   float64   `json:"baseline_latency,omitempty"`
	BaselineBandwidth float64   `json:"baseline_bandwidth,omitempty"`

	// GroupLabel is the Node.Labels key whose values form switch groups
	// (nodes behind one leaf, rack or group). "" looks for leaf, switch,
	// rack, group in that order; "-" turns switch-group localization off.
	GroupLabel string `json:"group_label,omitempty"`

	// TestedOnly judges a sweep whose plan does not cover every pair and
	// rail (one-to-all, a link sweep, a rail subset, cross rails only):
	// cells without a measurement stay untested but neither fail the sweep nor make their
	// nodes suspects, and JUnit leaves them out. Off, an untested cell is a
	// failure: the gate must not pass a sweep that measured half the fabric.
	TestedOnly bool `json:"tested_only,omitempty"`
	// SteeredLinks says the sweep steered its tests so that every switch
	// link carried at least two, with other partners (pattern links or
	// fabric): a link between switches is then also named on two bad
	// tests, where a sweep whose paths fell where ECMP put them needs
	// three to tell it from chance (an HCA's own cable on two failed ones:
	// two of its few tests slow can be a healthy fabric's noise).
	SteeredLinks bool `json:"steered_links,omitempty"`
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
	Kind     string      `json:"kind"` // hca | node | rail | switch-group | pair | cable | link | switch
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

	// BgBad/BgTotal are the comparison cells the blame was measured against
	// (the peers' other cells, or the cells outside a group).
	BgBad   int `json:"bg_bad"`
	BgTotal int `json:"bg_total"`
	// Confidence (0..1) that this component, and not a neighbour, explains
	// the cells; README.md gives the formula. Below LowConfidence, Note says
	// why the matrix cannot tell.
	Confidence float64 `json:"confidence"`
	Note       string  `json:"note,omitempty"`
	// Group ("leaf=L3") and its Members, for kind switch-group.
	Group   string   `json:"group,omitempty"`
	Members []string `json:"members,omitempty"`

	// Direction is "egress" when the HCA's (or node's) cells are much
	// worse as initiator than as target, "ingress" for the reverse;
	// DirectionRatio is how much worse (README.md, Localization).
	Direction      string  `json:"direction,omitempty"`
	DirectionRatio float64 `json:"direction_ratio,omitempty"`
	// FromRound is the round from which its cells fail, when they were
	// fine before it (a fault that struck mid-sweep); 0 = not time-based.
	FromRound int `json:"from_round,omitempty"`
	// Spread is the robust coefficient of variation of the figure behind
	// a performance verdict on its rail, when that spread lowered the
	// confidence (README.md, Confidence); 0 = it did not.
	Spread float64 `json:"spread,omitempty"`
	// Ends are the two ports of a cable or link suspect as the topology
	// names them ("leaf-r0-05:33", "spine-r0-02:5", "node-03/mlx5_1"); with
	// Direction "one-way" only traffic from Ends[0] to Ends[1] is hurt.
	// Switch names a switch suspect.
	Ends   []string `json:"ends,omitempty"`
	Switch string   `json:"switch,omitempty"`
	// Drop is the share of packets a cable or link suspect drops, as its
	// hop loss measured it (0..1); 0 when hop loss did not name it.
	Drop float64 `json:"drop,omitempty"`
	// HardFailures counts the cells among Bad that failed outright when
	// the dominant verdict is a performance one (0 when Verdict is
	// failed: then Bad says it); such a suspect ranks ahead of purely
	// slow ones (README.md, Ranking).
	HardFailures int `json:"hard_failures,omitempty"`
}

// RailNoise is one rail's figure that was not quiet.
type RailNoise struct {
	Rail   int    `json:"rail"`
	Figure string `json:"figure"` // p50 | gbps
	// Spread is the robust SD of the healthy cells' logs: about their
	// coefficient of variation.
	Spread float64 `json:"spread"`
	// Judged is "noisy" (cells beyond the noise, nodes' sides as a whole)
	// or "not-judged" (no cell is slow or low on its own).
	Judged string `json:"judged"`
	// Cells is how many cells the spread was measured on.
	Cells int `json:"cells"`
}

// LowConfidence is the confidence under which a suspect always carries a
// Note saying what is ambiguous.
const LowConfidence = 0.5

// SchemaVersion is Matrix.SchemaVersion for the JSON this package writes;
// SCHEMA.md documents it. It grows only when a field changes meaning or
// goes away; new optional fields do not bump it.
const SchemaVersion = 2

// Matrix is the analysed sweep.
type Matrix struct {
	// SchemaVersion is 0 in JSON written before it existed (version 1).
	SchemaVersion int        `json:"schema_version"`
	Nodes         []Node     `json:"nodes"`
	Rails         int        `json:"rails"`
	Thresholds    Thresholds `json:"thresholds"`
	// Cells are every (src != dst, rail), sorted by rail, src, dst. A
	// matrix from Analyse leaves it nil and holds the cells compactly:
	// NumCells, CellAt, VerdictAt and EachCell read either form.
	Cells []Result `json:"cells"`
	// Cross holds the cross-rail cells (Cell.DstRail set) of a cross- or
	// all-rail sweep, judged against their own population, sorted by
	// rail, dst rail, src, dst.
	Cross       []Result        `json:"cross,omitempty"`
	CrossCounts map[Verdict]int `json:"cross_counts,omitempty"`
	Counts      map[Verdict]int `json:"counts"`
	NodeRollups []Rollup        `json:"node_rollups"`
	RailRollups []Rollup        `json:"rail_rollups"`
	Suspects    []Suspect       `json:"suspects"` // most implicated first
	Healthy     bool            `json:"healthy"`
	// Ignored counts input cells Build could not place: an unknown node,
	// src == dst, or a rail outside 0..maxRails-1. Non-zero means the caller
	// fed cells from another membership view; worth a log line, not a panic.
	Ignored int `json:"ignored,omitempty"`
	// GroupLabel is the label key switch groups were formed from ("" when
	// none): Thresholds.GroupLabel, or the one found automatically.
	GroupLabel string `json:"group_label,omitempty"`
	// CellsOmitted counts the cells left out of Cells and Cross: the ok
	// ones by BadOnly, all of them by SummaryOnly; 0 in a complete matrix.
	CellsOmitted int `json:"cells_omitted,omitempty"`
	// Noise lists the rails whose healthy figures were too noisy for the
	// fixed rules, and how each was judged instead (spread.go); empty
	// when every rail was quiet.
	Noise []RailNoise `json:"noise,omitempty"`
	// Warnings are configuration findings from the inventories (an MTU
	// that differs from its rail's, a device on another network): they
	// fail nothing and exclude nobody.
	Warnings []Warning `json:"warnings,omitempty"`
	// LinkLoads are, with a topology, the directed links that bad tests
	// crossed and the share of the tests through each that were bad
	// (linkload.go); empty without a topology or a bad cell to route.
	LinkLoads []LinkLoad `json:"link_loads,omitempty"`

	// a is the compact form of the same-rail cells when Cells was not
	// materialised (Analyse); nil in a matrix from Build or from JSON.
	a *analysis
	// keep, in a compact BadOnly view, is the cells of a it lists, in
	// Cells order; nil lists them all.
	keep []int32
}
