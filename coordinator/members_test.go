package coordinator

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

// TestRegistryPairSlots: pair reads the live records through the sweep's
// table of its nodes by position, beside the sweep's own copies of the
// names; follows a record's changes; takes a name at another position than
// its slot's by name; and starts over for another sweep.
func TestRegistryPairSlots(t *testing.T) {
	r := newRegistry()
	for _, n := range []string{"node-a", "node-b"} {
		r.nodes[n] = &regNode{NodeInfo: api.NodeInfo{Name: n, State: "alive", APIAddr: n + ":7471"}}
	}
	// The sweep's names: equal to the registry's keys, other memory.
	a, b := strings.Clone("node-a"), strings.Clone("node-b")
	for range 2 {
		p := r.pair("s1", 3, a, 0, b)
		if !p.ok[0] || !p.ok[1] || p.api[0] != "node-a:7471" || p.api[1] != "node-b:7471" || p.target != &r.nodes["node-a"].target {
			t.Fatalf("pair = %+v", p)
		}
	}
	if len(r.slots) != 4 || unsafe.StringData(r.slots[3].name) != unsafe.StringData(a) || unsafe.StringData(r.slots[0].name) != unsafe.StringData(b) ||
		r.slots[1].n != nil {
		t.Fatalf("slots %+v: want the sweep's strings at 0 and 3", r.slots)
	}
	// Each name at the other's slot: the names, not the slots, decide.
	if p := r.pair("s1", 0, a, 3, b); p.api[0] != "node-a:7471" || p.api[1] != "node-b:7471" {
		t.Fatalf("names at each other's slots: %+v", p)
	}
	r.mu.Lock()
	r.nodes["node-b"].State = "dead"
	r.mu.Unlock()
	if p := r.pair("s1", 3, a, 0, b); p.state[1] != "dead" {
		t.Errorf("after the record changed: %+v", p)
	}
	if p := r.pair("s1", 3, a, 5, "node-x"); !p.ok[0] || p.ok[1] {
		t.Errorf("an unknown name: %+v", p)
	}
	if p := r.pair("s1", 0, a, -1, b); p.api[0] != "node-a:7471" || p.api[1] != "node-b:7471" {
		t.Errorf("a position past the slots: %+v", p)
	}
	a2 := strings.Clone("node-a")
	if p := r.pair("s2", 0, a2, 1, b); !p.ok[0] || p.state[1] != "dead" || r.slotSweep != "s2" {
		t.Errorf("another sweep: %+v (slot sweep %q)", p, r.slotSweep)
	}
	if len(r.slots) != 2 || unsafe.StringData(r.slots[0].name) != unsafe.StringData(a2) {
		t.Errorf("the new sweep's slots %+v kept the old sweep's", r.slots)
	}
}
