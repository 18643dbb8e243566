package topology

import (
	"net/netip"
	"strings"
	"testing"
)

// The lab's routed Clos as its plan writes it: two leaves, two spines,
// each answering traceroutes from its link addresses.
const closPlan = `link_layer: roce
switches:
  - {name: leaf1, tier: leaf, plane: 0, addrs: [10.78.1.1, 10.79.1.5, 10.79.1.9]}
  - {name: leaf2, tier: leaf, plane: 0, addrs: [10.78.2.1, 10.79.2.5, 10.79.2.9]}
  - {name: spine1, tier: spine, plane: 0, addrs: [10.79.1.6, 10.79.2.6]}
  - {name: spine2, tier: spine, plane: 0, addrs: [10.79.1.10, 10.79.2.10]}
cables:
  - {a: vm1/rxe0 rail 0, b: leaf1:1}
  - {a: vm2/rxe0 rail 0, b: leaf2:2}
  - {a: vm3/rxe0 rail 0, b: leaf1:3}
  - {a: leaf1:101, b: spine1:1}
  - {a: leaf1:102, b: spine2:1}
  - {a: leaf2:101, b: spine1:2}
  - {a: leaf2:102, b: spine2:2}
`

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		if a != "?" {
			out[i] = netip.MustParseAddr(a)
		}
	}
	return out
}

func TestPathFromHops(t *testing.T) {
	topo, err := ParsePlan("clos.yaml", []byte(closPlan))
	if err != nil {
		t.Fatal(err)
	}
	h := func(node string) int {
		i, ok := topo.HCA(node, 0)
		if !ok {
			t.Fatalf("no HCA %s", node)
		}
		return i
	}
	names := func(p []Link) string {
		var s []string
		for _, l := range p {
			s = append(s, topo.LinkName(l))
		}
		return strings.Join(s, " | ")
	}
	via2 := "vm1/rxe0 -> leaf1:1 | leaf1:102 -> spine2:1 | spine2:2 -> leaf2:102 | leaf2:2 -> vm2/rxe0"
	for _, tc := range []struct {
		name     string
		src, dst string
		hops     []netip.Addr
		want     string // the path, or the error's text
	}{
		{"over spine2", "vm1", "vm2", addrs("10.78.1.1", "10.79.1.10", "10.79.2.5"), via2},
		{"the destination answered last", "vm1", "vm2", addrs("10.78.1.1", "10.79.1.10", "10.79.2.5", "10.78.2.12"), via2},
		{"IPv4-mapped answers", "vm1", "vm2", addrs("::ffff:10.78.1.1", "::ffff:10.79.1.10", "::ffff:10.79.2.5"), via2},
		{"same leaf", "vm1", "vm3", addrs("10.78.1.1"), "vm1/rxe0 -> leaf1:1 | leaf1:3 -> vm3/rxe0"},
		{"a hop did not answer", "vm1", "vm2", addrs("10.78.1.1", "?", "10.79.2.5"), "hop 2: no answer"},
		{"an address of no switch", "vm1", "vm2", addrs("10.78.1.1", "192.0.2.7", "10.79.2.5"), "hop 2: 192.0.2.7 is no switch address"},
		{"not the source's leaf", "vm1", "vm2", addrs("10.78.2.1"), "hop 1: leaf2 answered, but vm1/rxe0 is cabled to leaf1"},
		{"stopped short", "vm1", "vm2", addrs("10.78.1.1", "10.79.1.6"), "the path ends at spine1, but vm2/rxe0 is cabled to leaf2"},
		{"no answer at all", "vm1", "vm2", addrs("?"), "hop 1: no answer"},
		{"no cable between", "vm1", "vm2", addrs("10.78.1.1", "10.78.2.1"), "hop 2: no cable joins leaf1 and leaf2"},
	} {
		p, err := topo.PathFromHops(nil, h(tc.src), h(tc.dst), tc.hops)
		got := names(p)
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, tc.want) || err != nil && len(p) != 0 {
			t.Errorf("%s: got %q (%d links), want %q", tc.name, got, len(p), tc.want)
		}
	}
}

func TestPathFromHopsParallelCables(t *testing.T) {
	plan := strings.Replace(closPlan, "  - {a: leaf2:102, b: spine2:2}\n", "  - {a: leaf2:102, b: spine2:2}\n  - {a: leaf1:103, b: spine2:3}\n", 1)
	topo, err := ParsePlan("clos.yaml", []byte(plan))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := topo.HCA("vm1", 0)
	b, _ := topo.HCA("vm2", 0)
	_, err = topo.PathFromHops(nil, a, b, addrs("10.78.1.1", "10.79.1.10", "10.79.2.5"))
	if err == nil || !strings.Contains(err.Error(), "2 cables join leaf1 and spine2") {
		t.Fatalf("two cables between the hops: %v", err)
	}
}

func TestPlanAddrsBadInput(t *testing.T) {
	for _, tc := range []struct{ edit, want string }{
		{"10.79.1.x, 10.79.2.6]", `clos.yaml:5: switch 3, field addrs: "10.79.1.x": want IP addresses`},
		{"10.79.1.6, 10.78.1.1]", "address 10.78.1.1 is given to switches leaf1 and spine1"},
	} {
		bad := strings.Replace(closPlan, "10.79.1.6, 10.79.2.6]", tc.edit, 1)
		_, err := ParsePlan("clos.yaml", []byte(bad))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.edit, err, tc.want)
		}
	}
}
