package web

import (
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

func TestZZDemo(t *testing.T) {
	addr := os.Getenv("RDMAMESH_DEMO_ADDR")
	if addr == "" {
		t.Skip()
	}
	const n, rails = 64, 8
	var names []string
	for i := 1; i <= n; i++ {
		names = append(names, fmt.Sprintf("gpu-node-%03d", i))
	}
	mk := func(frac float64) *matrix.Matrix {
		m := &matrix.Matrix{Rails: rails, Counts: map[matrix.Verdict]int{}}
		for _, nm := range names {
			var ports []probe.Port
			for r := range rails {
				ports = append(ports, probe.Port{Device: fmt.Sprintf("mlx5_%d", r), Port: 1, Rail: r, State: "ACTIVE", RateGbps: 400, MTU: 4096, Usable: true})
			}
			m.Nodes = append(m.Nodes, matrix.Node{Name: nm, State: "alive", Ports: ports})
		}
		k := 0
		for r := range rails {
			for i, s := range names {
				for j, d := range names {
					if i == j {
						continue
					}
					k++
					c := matrix.Result{Cell: matrix.Cell{Src: s, Dst: d, Rail: r, SrcDevice: fmt.Sprintf("mlx5_%d", r), DstDevice: fmt.Sprintf("mlx5_%d", r), Round: 1 + (i+j)%63, Class: probe.ClassOK}}
					if float64((i*7+j*13)%100)/100 >= frac {
						c.Verdict = matrix.VerdictUntested
						c.Class = ""
					} else if r == 3 && (i == 16 || j == 16) {
						c.Class = probe.ClassRetryExceeded
						c.Error = &probe.Error{Class: probe.ClassRetryExceeded, Verb: "ibv_poll_cq", WCStatus: 12, Cause: "packets lost <b>on path</b>", Fix: "reseat cable on gpu-node-017/mlx5_3"}
						c.Verdict = matrix.VerdictFailed
						c.Reason = "test did not complete"
					} else {
						p50 := 1900 + float64((i*31+j*17+r*5)%400)
						bw := 385 + float64((i*3+j*11+r)%12)
						c.Verdict = matrix.VerdictOK
						if i == 4 && j == 8 {
							p50 *= 3
							c.Verdict = matrix.VerdictSlowLatency
							c.Reason = "p50 6.1 µs > 2.1 x min"
						}
						if (i == 39 || j == 39) && r == 6 {
							bw = 180
							c.Verdict = matrix.VerdictLowBandwidth
							c.Reason = "180 Gb/s < 93% of max"
						}
						c.Latency = &probe.Latency{Samples: 1000, P50Ns: p50, P99Ns: p50 * 1.4}
						c.Bandwidth = &probe.Bandwidth{Gbps: bw}
					}
					m.Counts[c.Verdict]++
					m.Cells = append(m.Cells, c)
				}
			}
		}
		m.Suspects = []matrix.Suspect{{Kind: "hca", Node: "gpu-node-017", Device: "mlx5_3", Rail: 3, Class: probe.ClassRetryExceeded, Reason: "all cells through this HCA failed", Fix: "reseat cable", Bad: 126, Total: 126, Evidence: "wc status 12 on 126/126"},
			{Kind: "pair", Node: "gpu-node-005", Peer: "gpu-node-009", Rail: 0, Reason: "slow latency", Bad: 1, Total: 16}}
		m.Healthy = false
		return m
	}
	f := &fakeBackend{
		sweeps: []api.SweepInfo{
			{ID: "s2", State: api.SweepRunning, Mode: "quick", Rounds: 63, RoundsDone: 25, Cells: n * (n - 1) * rails, CellsDone: 12000, Started: time.Now()},
			{ID: "s1", State: api.SweepDone, Mode: "full", Rounds: 63, RoundsDone: 63, Cells: n * (n - 1) * rails, CellsDone: n * (n - 1) * rails, Started: time.Now().Add(-time.Hour)},
		},
		matrices: map[string]*matrix.Matrix{"s1": mk(1.01), "s2": mk(0.4)},
		startErr: busyErr{},
	}
	for i, nm := range names[:4] {
		f.nodes = append(f.nodes, api.NodeInfo{Name: nm, Role: "worker", State: []string{"alive", "suspect", "alive", "dead"}[i], APIAddr: "10.0.0.1:7070",
			Inventory: &probe.Inventory{Ports: []probe.Port{{Device: "mlx5_0", Port: 1, LinkLayer: "Ethernet", State: "ACTIVE", RateGbps: 400, MTU: 4096, GIDIndex: 3, GIDType: "RoCE v2", GIDReason: "IPv4-mapped", Netdev: "eth0", IP: "10.0.0.1", Usable: true},
				{Device: "mlx5_1", Port: 1, Rail: 1, LinkLayer: "Ethernet", State: "DOWN", Usable: false, UnusableWhy: "port down", FailedChecks: []probe.Check{{Name: "port-state", Status: "fail", Cause: "link down", Fix: "check cable"}}}},
				Checks: []probe.Check{{Name: "memlock", Status: "warn", Cause: "ulimit -l 64", Fix: "set unlimited"}}}})
	}
	t.Log(http.ListenAndServe(addr, New(f, Options{Title: "demo"}).Handler()))
}
