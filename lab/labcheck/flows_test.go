package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The flows a sweep reported are checked against the spines' captures: a
// cross-leaf flow on exactly one spine, a same-leaf one on none.
func TestCheckFlows(t *testing.T) {
	dir := t.TempDir()
	caps := filepath.Join(dir, "cap")
	if err := os.Mkdir(caps, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(caps, "spine1.txt"), "12:00:00.1 s1l1 In IP 10.78.1.11.49441 > 10.78.2.12.4791: UDP, length 40\n"+
		"12:00:00.2 s1l2 In IP 10.78.2.12.49441 > 10.78.1.11.4791: UDP, length 20\n")
	sweep := func(flow, back string) string {
		p := filepath.Join(dir, "sweep-"+flow+"-"+back+".json")
		write(p, `{"nodes": [{"name": "vm1", "ports": [{"rail": 0, "ip": "10.78.1.11"}]},
			{"name": "vm2", "ports": [{"rail": 0, "ip": "10.78.2.12"}]}, {"name": "vm3", "ports": [{"rail": 0, "ip": "10.78.1.13"}]}],
			"cells": [{"src": "vm1", "dst": "vm2", "rail": 0, "flow": `+flow+`, "back_flow": `+back+`},
			{"src": "vm1", "dst": "vm3", "rail": 0, "flow": 49500, "back_flow": 49500}]}`)
		return p
	}
	if err := checkFlows(sweep("49441", "49441"), caps); err != nil {
		t.Fatalf("flows that match the wire: %v", err)
	}
	for _, tc := range []struct{ flow, back, want string }{
		{"49442", "49441", "flow 49442 (10.78.1.11 -> 10.78.2.12) seen on spines map[], want exactly one"},
		{"49441", "0", "no back flow reported"},
	} {
		if err := checkFlows(sweep(tc.flow, tc.back), caps); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("flow %s, back %s: %v, want %q", tc.flow, tc.back, err, tc.want)
		}
	}
}
