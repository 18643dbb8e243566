package main

import (
	"context"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/inventory"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// Each RoCE v2 port with an IP gets a trace check: ok where the
// namespace hands ICMP errors to a UDP socket (loopback does), a warning
// naming the reason where the GID's address is not this namespace's.
func TestDoctorTraceChecks(t *testing.T) {
	rep := &inventory.Report{Ports: []probe.Port{
		{Device: "rxe0", Port: 1, GIDType: "RoCE v2", IP: "127.0.0.1"},
		{Device: "rxe1", Port: 1, GIDType: "RoCE v2", IP: "192.0.2.7"},
		{Device: "mlx5_0", Port: 1, GIDType: "IB/RoCE v1"},
	}}
	traceChecks(context.Background(), rep)
	if len(rep.Checks) != 2 || rep.Summary.OK != 1 || rep.Summary.Warn != 1 || rep.ExitCode != 0 {
		t.Fatalf("checks %+v, summary %+v, exit %d", rep.Checks, rep.Summary, rep.ExitCode)
	}
	ok, warn := rep.Checks[0], rep.Checks[1]
	if ok.Name != "trace:rxe0/1" || ok.Status != inventory.StatusOK || !strings.Contains(ok.Evidence, "can be traced") {
		t.Errorf("loopback: %+v", ok)
	}
	if warn.Name != "trace:rxe1/1" || warn.Status != inventory.StatusWarn || !strings.Contains(warn.Evidence, "not an address of this network namespace") {
		t.Errorf("a foreign address: %+v", warn)
	}
}
