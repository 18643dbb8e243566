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

// SweepRequest is the body of POST /api/v1/sweeps. Zero fields take the
// coordinator's configured defaults.
type SweepRequest struct {
	Mode         string   `json:"mode,omitempty"` // quick | full
	Nodes        []string `json:"nodes,omitempty"`
	Rails        []int    `json:"rails,omitempty"`
	LatencyIters int      `json:"latency_iters,omitempty"`
	LatencySize  int      `json:"latency_size,omitempty"`
	BWSize       int      `json:"bw_size,omitempty"`
	BWIters      int      `json:"bw_iters,omitempty"`
	PairTimeout  string   `json:"pair_timeout,omitempty"` // Go duration, e.g. "10s"
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
