package web

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// fakeBackend is a coordinator with canned state; it records what web asks
// of it so tests can prove bad requests never reach the backend.
type fakeBackend struct {
	mu       sync.Mutex
	nodes    []api.NodeInfo
	sweeps   []api.SweepInfo // newest first
	matrices map[string]*matrix.Matrix
	startErr error
	started  []api.SweepRequest
	panicky  bool

	sweepCalls  int
	listCalls   int
	matrixCalls int
	matrixPanic bool
}

// update changes a sweep in place under the lock, as the coordinator's FSM
// would while streams watch it; a nil change removes the sweep.
func (f *fakeBackend) update(id string, change func(*api.SweepInfo)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.sweeps {
		if f.sweeps[i].ID != id {
			continue
		}
		if change == nil {
			f.sweeps = append(f.sweeps[:i:i], f.sweeps[i+1:]...)
			return
		}
		change(&f.sweeps[i])
		return
	}
}

func (f *fakeBackend) matrixAsks() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.matrixCalls
}

func (f *fakeBackend) lists() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.listCalls
}

func (f *fakeBackend) polls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sweepCalls
}

func (f *fakeBackend) Nodes() []api.NodeInfo {
	if f.panicky {
		panic("fake backend exploded")
	}
	return f.nodes
}

func (f *fakeBackend) Sweeps() []api.SweepInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listCalls++
	return slices.Clone(f.sweeps)
}

func (f *fakeBackend) Status() api.Status {
	return api.Status{Name: "c0", State: "Leader", Leader: "c0", Voters: []string{"c0"}}
}

func (f *fakeBackend) Sweep(id string) (api.SweepInfo, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sweepCalls++
	for _, s := range f.sweeps {
		if s.ID == id {
			return s, true
		}
	}
	return api.SweepInfo{}, false
}

func (f *fakeBackend) Matrix(id string) (*matrix.Matrix, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.matrixCalls++
	if f.matrixPanic {
		panic("fake matrix exploded")
	}
	m, ok := f.matrices[id]
	return m, ok
}

func (f *fakeBackend) StartSweep(_ context.Context, req api.SweepRequest) (api.SweepInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = append(f.started, req)
	if f.startErr != nil {
		return api.SweepInfo{}, f.startErr
	}
	mode := req.Mode
	if mode == "" {
		mode = "quick"
	}
	return api.SweepInfo{ID: "s3", State: api.SweepRunning, Mode: mode, Nodes: []string{"n1", "n2", "n3"},
		Rails: 2, Rounds: 3, Started: time.Unix(1700000300, 0).UTC()}, nil
}

func (f *fakeBackend) startCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.started)
}

func newFake() *fakeBackend {
	healthy := false
	return &fakeBackend{
		nodes: []api.NodeInfo{
			{Name: "n1", Role: "worker", State: "alive", Addr: "10.0.0.1:7946", APIAddr: "10.0.0.1:7070",
				Inventory: &probe.Inventory{Version: 1, Node: "n1", Provider: "sim", Ports: []probe.Port{
					{Device: "mlx5_0", Port: 1, Rail: 0, LinkLayer: "Ethernet", State: "ACTIVE", RateGbps: 400,
						MTU: 4096, GIDIndex: 3, GIDType: "RoCE v2", GIDReason: "IPv4-mapped RoCE v2",
						Netdev: "eth0", IP: "10.0.0.1", Usable: true},
				}}},
			{Name: "coord", Role: "coordinator", State: "alive", APIAddr: "10.0.0.9:8080"},
		},
		sweeps: []api.SweepInfo{
			{ID: "s2", State: api.SweepRunning, Mode: "quick", Nodes: []string{"n1", "n2", "n3"}, Rails: 2,
				Rounds: 3, RoundsDone: 1, Cells: 12, CellsDone: 4, Started: time.Unix(1700000200, 0).UTC()},
			{ID: "s1", State: api.SweepDone, Mode: "full", Nodes: []string{"n1", "n2", "n3"}, Rails: 2,
				Rounds: 3, RoundsDone: 3, Cells: 12, CellsDone: 12, Started: time.Unix(1700000000, 0).UTC(),
				Finished: time.Unix(1700000100, 0).UTC(), Healthy: &healthy},
		},
		matrices: map[string]*matrix.Matrix{"s1": testMatrix(), "s2": testMatrix()},
	}
}

// testMatrix is three nodes on two rails, filled by hand: n3's rail-1 HCA
// fails every test it takes part in, everything else measures fine.
func testMatrix() *matrix.Matrix {
	names := []string{"n1", "n2", "n3"}
	m := &matrix.Matrix{
		Rails:      2,
		Thresholds: matrix.Thresholds{LatencyFactor: 2.1, BandwidthFraction: 0.93},
		Counts:     map[matrix.Verdict]int{},
	}
	for _, n := range names {
		m.Nodes = append(m.Nodes, matrix.Node{Name: n, State: "alive", Ports: []probe.Port{
			{Device: "mlx5_0", Port: 1, Rail: 0, State: "ACTIVE", RateGbps: 400, MTU: 4096, Usable: true},
			{Device: "mlx5_1", Port: 1, Rail: 1, State: "ACTIVE", RateGbps: 400, MTU: 4096, Usable: true},
		}})
	}
	for rail := range 2 {
		for _, src := range names {
			for _, dst := range names {
				if src == dst {
					continue
				}
				c := matrix.Result{Cell: matrix.Cell{Src: src, Dst: dst, Rail: rail,
					SrcDevice: m.Nodes[0].Ports[rail].Device, DstDevice: m.Nodes[0].Ports[rail].Device,
					Round: 1, Class: probe.ClassOK}}
				if rail == 1 && (src == "n3" || dst == "n3") {
					c.Class = probe.ClassRetryExceeded
					c.Error = &probe.Error{Class: probe.ClassRetryExceeded, Verb: "ibv_poll_cq", WCStatus: 12,
						Cause: "packets to the peer are lost", Fix: "check the cable and switch port of n3/mlx5_1"}
					c.Verdict = matrix.VerdictFailed
					c.Reason = "test did not complete: retry-exceeded"
				} else {
					c.Latency = &probe.Latency{Samples: 1000, MinNs: 1800, P50Ns: 2000, P99Ns: 2600}
					c.Bandwidth = &probe.Bandwidth{Gbps: 390, Bytes: 1 << 24}
					c.Verdict = matrix.VerdictOK
				}
				m.Counts[c.Verdict]++
				m.Cells = append(m.Cells, c)
			}
		}
	}
	m.Suspects = []matrix.Suspect{{Kind: "hca", Node: "n3", Device: "mlx5_1", Rail: 1,
		Class: probe.ClassRetryExceeded, Reason: "every cell through n3/mlx5_1 failed",
		Fix: "check the cable and switch port", Bad: 4, Total: 4}}
	return m
}

// Backend errors exercising the behaviour mapping; none of them is a web type.
type (
	fieldErr       struct{ field string }
	busyErr        struct{}
	notLeaderErr   struct{}
	notConflictErr struct{}
)

func (e fieldErr) Error() string       { return "unknown node in " + e.field }
func (e fieldErr) Field() string       { return e.field }
func (busyErr) Error() string          { return "a sweep is already running" }
func (busyErr) Conflict() bool         { return true }
func (notLeaderErr) Error() string     { return "not the leader; ask 10.0.0.9:8080" }
func (notLeaderErr) Unavailable() bool { return true }
func (notConflictErr) Error() string   { return "something odd" }
func (notConflictErr) Conflict() bool  { return false }
