package coordinator

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

// TestRegistryPairAliases: pair reads the live records through the sweep's
// own copies of the names, follows a record's changes, and starts over
// for another sweep.
func TestRegistryPairAliases(t *testing.T) {
	r := newRegistry()
	for _, n := range []string{"node-a", "node-b"} {
		r.nodes[n] = &regNode{NodeInfo: api.NodeInfo{Name: n, State: "alive", APIAddr: n + ":7471"}}
	}
	// The sweep's names: equal to the registry's keys, other memory.
	a, b := strings.Clone("node-a"), strings.Clone("node-b")
	for range 2 {
		p := r.pair("s1", a, b)
		if !p.ok[0] || !p.ok[1] || p.api[0] != "node-a:7471" || p.api[1] != "node-b:7471" || p.target != &r.nodes["node-a"].target {
			t.Fatalf("pair = %+v", p)
		}
	}
	for k := range r.alias {
		if unsafe.StringData(k) != unsafe.StringData(a) && unsafe.StringData(k) != unsafe.StringData(b) {
			t.Errorf("alias key %q is not the sweep's string", k)
		}
	}
	r.mu.Lock()
	r.nodes["node-b"].State = "dead"
	r.mu.Unlock()
	if p := r.pair("s1", a, b); p.state[1] != "dead" {
		t.Errorf("after the record changed: %+v", p)
	}
	if p := r.pair("s1", a, "node-x"); !p.ok[0] || p.ok[1] {
		t.Errorf("an unknown name: %+v", p)
	}
	a2 := strings.Clone("node-a")
	if p := r.pair("s2", a2, b); !p.ok[0] || p.state[1] != "dead" || r.aliasSweep != "s2" {
		t.Errorf("another sweep: %+v (alias sweep %q)", p, r.aliasSweep)
	}
	for k := range r.alias {
		if k == "node-a" && unsafe.StringData(k) != unsafe.StringData(a2) {
			t.Error("the new sweep's alias table kept the old sweep's string")
		}
	}
}
