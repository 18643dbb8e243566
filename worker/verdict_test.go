package worker

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// After a failed test the initiator asks the responder's worker what
// happened to it: gone entirely, or its port went down.
func TestExplainPeerFailure(t *testing.T) {
	a := &Agent{log: slog.New(slog.DiscardHandler), client: &http.Client{}}
	rp := probe.RailPair{Dst: probe.Endpoint{Device: "rxe0", Port: 1}}
	lost := &probe.Error{Class: probe.ClassRetryExceeded, Cause: "packets lost on the path after 12 successful writes", WCStatus: 12}

	// A peer that does not answer died during the test.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	got := probe.Classify(a.explainPeerFailure(wire.Task{Dst: "vm3", DstAPI: dead}, rp, lost))
	if got.Class != probe.ClassPeerLost || !strings.Contains(got.Cause, "vm3 stopped answering") || got.WCStatus != 12 {
		t.Fatalf("dead peer: %+v", got)
	}

	health := HealthReply{Devices: []probe.DeviceHealth{{Device: "rxe0", State: probe.HealthPortDown, DownPorts: []int{1},
		Cause: "rxe0 port 1 went down (IBV_EVENT_PORT_ERR)", Fix: "bring eth1 up"}}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(health)
	}))
	defer srv.Close()
	api := strings.TrimPrefix(srv.URL, "http://")
	got = probe.Classify(a.explainPeerFailure(wire.Task{Dst: "vm3", DstAPI: api}, rp, lost))
	if got.Class != probe.ClassPortDown || !strings.Contains(got.Cause, "on vm3: rxe0 port 1 went down") || got.Fix != "on vm3: bring eth1 up" {
		t.Fatalf("peer port down: %+v", got)
	}
	// Another port being down says nothing about ours.
	other := probe.RailPair{Dst: probe.Endpoint{Device: "rxe0", Port: 2}}
	if got := a.explainPeerFailure(wire.Task{Dst: "vm3", DstAPI: api}, other, lost); !errors.Is(got, lost) {
		t.Fatalf("other port: %v", got)
	}
	// A healthy peer leaves the diagnosis alone, and so does a class
	// the peer cannot explain.
	health = HealthReply{Devices: []probe.DeviceHealth{{Device: "rxe0", State: probe.HealthOK}}}
	if got := a.explainPeerFailure(wire.Task{Dst: "vm3", DstAPI: api}, rp, lost); !errors.Is(got, lost) {
		t.Fatalf("healthy peer: %v", got)
	}
	// Silence from a responder that is alive with its port up is the path
	// losing its writes, not a lost peer.
	silent := &probe.Error{Class: probe.ClassPeerLost, Verb: "wait for peer write", Cause: "the responder stopped answering after 154 iterations"}
	got = probe.Classify(a.explainPeerFailure(wire.Task{Dst: "vm3", DstAPI: api}, rp, silent))
	if got.Class != probe.ClassTimeout || !strings.Contains(got.Cause, "after 154 iterations, although worker vm3 is alive") ||
		!strings.Contains(got.Cause, "lost on the path") || !strings.Contains(got.Fix, "counters") {
		t.Fatalf("silent but healthy responder: %+v", got)
	}
	gid := &probe.Error{Class: probe.ClassInvalidGID, Cause: "RTR EINVAL"}
	if got := a.explainPeerFailure(wire.Task{Dst: "vm3", DstAPI: dead}, rp, gid); !errors.Is(got, gid) {
		t.Fatalf("invalid GID is ours to report: %v", got)
	}
}
