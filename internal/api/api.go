// Package api holds the JSON shapes of the coordinator's /api/v1, shared by
// the coordinator (which fills them) and web (which serves them), so neither
// imports the other.
package api

import (
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// NodeInfo is one member as the coordinator knows it from gossip.
type NodeInfo struct {
	Name      string           `json:"name"`
	Role      string           `json:"role"`  // worker | coordinator
	State     string           `json:"state"` // alive | suspect | dead | left
	Addr      string           `json:"addr"`  // gossip address
	APIAddr   string           `json:"api_addr"`
	RaftAddr  string           `json:"raft_addr,omitempty"` // coordinators only
	LastSeen  time.Time        `json:"last_seen"`
	Inventory *probe.Inventory `json:"inventory,omitempty"`
}

// SweepRequest is the body of POST /api/v1/sweeps (and the gate's spec
// file). Zero fields take the coordinator's configured defaults.
type SweepRequest struct {
	Mode string `json:"mode,omitempty" yaml:"mode,omitempty"` // quick | full

	// Node selection; all given selectors must match. Nodes lists names,
	// Hosts is a Slurm hostlist expression (gpu[001-128,130]), Labels
	// matches gossip labels (rack=r1).
	Nodes  []string          `json:"nodes,omitempty" yaml:"nodes,omitempty"`
	Hosts  string            `json:"hosts,omitempty" yaml:"hosts,omitempty"`
	Labels map[string]string `json:"labels,omitempty" yaml:"labels,omitempty"`

	// Pattern is all-pairs (default), k-batch (BatchSize pairs per round),
	// one-to-all (Root against every other node), links (tests steered
	// over every switch link of the topology) or fabric (links plus every
	// pair inside each leaf group).
	Pattern   string `json:"pattern,omitempty" yaml:"pattern,omitempty"`
	BatchSize int    `json:"batch_size,omitempty" yaml:"batch_size,omitempty"`
	Root      string `json:"root,omitempty" yaml:"root,omitempty"`
	// RailMode is same (default), cross or all.
	RailMode string `json:"rail_mode,omitempty" yaml:"rail_mode,omitempty"`
	Rails    []int  `json:"rails,omitempty" yaml:"rails,omitempty"`

	LatencyIters int    `json:"latency_iters,omitempty" yaml:"latency_iters,omitempty"`
	LatencySize  int    `json:"latency_size,omitempty" yaml:"latency_size,omitempty"`
	BWSize       int    `json:"bw_size,omitempty" yaml:"bw_size,omitempty"`
	BWIters      int    `json:"bw_iters,omitempty" yaml:"bw_iters,omitempty"`
	Connect      string `json:"connect,omitempty" yaml:"connect,omitempty"`           // exchange | rdmacm
	PairTimeout  string `json:"pair_timeout,omitempty" yaml:"pair_timeout,omitempty"` // Go duration, e.g. "10s"
	// Budget bounds the whole sweep (Go duration); past it the sweep
	// fails with the rounds it managed.
	Budget string `json:"budget,omitempty" yaml:"budget,omitempty"`
	// Retests is how many confirmation passes suspect pairs get (ClusterKit
	// style, each pass retests what is still bad); nil = the default, 0 = none.
	Retests *int `json:"retests,omitempty" yaml:"retests,omitempty"`
	// Profile names a threshold profile the coordinator loaded.
	Profile string `json:"profile,omitempty" yaml:"profile,omitempty"`
}

// Sweep states.
const (
	SweepRunning = "running"
	SweepDone    = "done"
	SweepFailed  = "failed"
)

// SweepInfo is a sweep's header and progress.
type SweepInfo struct {
	ID         string    `json:"id"`
	State      string    `json:"state"`
	Mode       string    `json:"mode"`
	Nodes      []string  `json:"nodes"`
	Rails      int       `json:"rails"`
	Rounds     int       `json:"rounds"`
	RoundsDone int       `json:"rounds_done"`
	Cells      int       `json:"cells"`
	CellsDone  int       `json:"cells_done"`
	Started    time.Time `json:"started"`
	Finished   time.Time `json:"finished,omitzero"`
	Error      string    `json:"error,omitempty"`
	Healthy    *bool     `json:"healthy,omitempty"`
	// Spec is the request as the coordinator resolved it (defaults filled).
	Spec *SweepRequest `json:"spec,omitempty"`
	// RetestPass is the confirmation pass running (0 = the main rounds);
	// Retested counts the pairs retested so far.
	RetestPass int `json:"retest_pass,omitempty"`
	Retested   int `json:"retested,omitempty"`
	// Topology is the version of the fabric topology the sweep ran on
	// (a content digest, store.TopologyVersion); "" when it ran without one.
	Topology string `json:"topology,omitempty"`
}

// Error is the body of every 4xx/5xx answer.
type Error struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

// Status is GET /api/v1/status: this coordinator's view of the raft cluster.
type Status struct {
	Name          string   `json:"name"`
	State         string   `json:"state"` // Leader | Follower | Candidate | Shutdown
	Leader        string   `json:"leader"`
	Voters        []string `json:"voters"`
	LastIndex     uint64   `json:"last_index"`
	AppliedIndex  uint64   `json:"applied_index"`
	LeaderChanges uint64   `json:"leader_changes"`
	Workers       int      `json:"workers"` // alive workers in gossip
}

// CellTrace is POST /api/v1/sweeps/:id/trace's answer: the hops a cell's
// flow takes now, traced from its initiator with the test's 5-tuple, and
// the links they are on the sweep's topology.
type CellTrace struct {
	Src   string     `json:"src"`
	Dst   string     `json:"dst"`
	Rail  int        `json:"rail"`
	SrcIP string     `json:"src_ip"`
	DstIP string     `json:"dst_ip"`
	Flow  uint16     `json:"flow"` // the UDP source port traced
	Hops  []TraceHop `json:"hops"`
	// Why is how the trace ended, in words.
	Why string `json:"why"`
	// Links are the links the hops are on the topology (topology.LinkName
	// each); empty with LinksUnknown saying why when they cannot be told.
	Links        []string `json:"links,omitempty"`
	LinksUnknown string   `json:"links_unknown,omitempty"`
}

// SweepPath is one flow a sweep traced after its rounds (GET
// /api/v1/sweeps/{id}/paths): the data flow of cell Src → Dst on Rail, or
// with Back its responder's (Dst → Src).
type SweepPath struct {
	Src  string `json:"src"`
	Dst  string `json:"dst"`
	Rail int    `json:"rail"`
	Back bool   `json:"back,omitempty"`
	Flow int    `json:"flow"` // the UDP source port traced
	// Hops are the answering addresses by TTL from 1, "" where none came.
	Hops []string `json:"hops"`
	Why  string   `json:"why,omitempty"`
	// Links and LinksUnknown as in CellTrace: the links the analysis
	// routes the cell over, or why the hops do not make a path.
	Links        []string `json:"links,omitempty"`
	LinksUnknown string   `json:"links_unknown,omitempty"`
}

// TraceHop is one TTL of a trace.
type TraceHop struct {
	TTL    int    `json:"ttl"`
	Addr   string `json:"addr,omitempty"`   // empty: nobody answered
	Switch string `json:"switch,omitempty"` // the topology's switch with that address
	Reason string `json:"reason,omitempty"` // why the hop is unknown
}

// TraceRequest is POST /api/v1/sweeps/:id/trace's body: the cell to trace.
type TraceRequest struct {
	Src  string `json:"src"`
	Dst  string `json:"dst"`
	Rail int    `json:"rail"`
}

// Coverage is GET /api/v1/sweeps/:id/coverage: how the sweep's tests
// crossed the topology's switch links, by the paths they took (traced
// where the sweep traced them, else the topology's model of the flow
// each reported), per rail plane.
type Coverage struct {
	Sweep string `json:"sweep"`
	// Traced and Modelled count the tests whose path came from a trace
	// and from the model; Unknown those with neither (a RoCE test that
	// failed before its QP had a source port, a trace that did not map).
	Traced   int             `json:"traced"`
	Modelled int             `json:"modelled"`
	Unknown  int             `json:"unknown"`
	Planes   []PlaneCoverage `json:"planes"`
}

// PlaneCoverage is one rail's switch links: how many link directions,
// how many have two tests with different partners through them, how
// many tests ran, the fewest and most through one link direction, and
// the directions left short with the reason.
type PlaneCoverage struct {
	Rail      int             `json:"rail"`
	Links     int             `json:"links"`
	Covered   int             `json:"covered"`
	Tests     int             `json:"tests"`
	MinTests  int             `json:"min_tests"`
	MaxTests  int             `json:"max_tests"`
	Uncovered []UncoveredLink `json:"uncovered,omitempty"`
}

// UncoveredLink is a link direction short of tests.
type UncoveredLink struct {
	Link  string `json:"link"`
	Tests int    `json:"tests"`
	Why   string `json:"why"`
}

// CablingSource is what GET /api/v1/cabling judged the cables from, sent
// beside the report ("source"): a report with few neighbours or paths
// says little, and this says why.
type CablingSource struct {
	// Plan is the topology version checked against; "" when there is no
	// plan and the report is a survey of what was seen.
	Plan string `json:"plan,omitempty"`
	// Workers is how many live workers reported their ports, Neighbors
	// how many of those ports named an LLDP neighbour.
	Workers   int `json:"workers"`
	Neighbors int `json:"neighbors"`
	// Sweep is the sweep whose traced flows were read ("" none), Paths
	// how many of them named a switch.
	Sweep string `json:"sweep,omitempty"`
	Paths int    `json:"paths"`
	// SwitchTables says whether switches' own neighbour tables were read.
	SwitchTables string `json:"switch_tables"`
}
