package cabling

import (
	"fmt"
	"testing"

	"github.com/rdmamesh/rdmamesh/topology"
)

// smallTree is 8 nodes x 2 rails, 2 leaves and 2 spines a plane, each
// leaf with 4 node ports (1-4) and 2 cables to each spine (ports 5-8).
func smallTree(t *testing.T) *topology.Topology {
	t.Helper()
	_, topo, err := topology.GenerateFatTree("nodes=8,rails=2,leaf=4,spines=2")
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func swp(_ topology.Switch, port int) string { return fmt.Sprintf("swp%d", port) }

// host is the observed port of node's rail, to change in place.
func host(t *testing.T, obs *Observed, node string, rail int) *HostPort {
	t.Helper()
	for i := range obs.Hosts {
		if h := &obs.Hosts[i]; h.Node == node && h.Rail == rail {
			return h
		}
	}
	t.Fatalf("no observed port %s rail %d", node, rail)
	return nil
}

// switchLine is the switch table line of sw's port, to change in place.
func switchLine(t *testing.T, obs *Observed, sw, port string) int {
	t.Helper()
	for i, l := range obs.Switches {
		if l.Switch == sw && l.Port == port {
			return i
		}
	}
	t.Fatalf("no table line %s %s", sw, port)
	return -1
}

// findingsOf is the non-ok findings as "END verdict found" lines.
func findingsOf(r *Report) []string {
	var out []string
	for _, f := range r.Findings() {
		s := f.End + " " + string(f.Verdict) + " " + f.Found
		if f.With != "" {
			s += " with " + f.With
		}
		out = append(out, s)
	}
	return out
}
