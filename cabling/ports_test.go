package cabling

import (
	"fmt"
	"testing"

	"github.com/rdmamesh/rdmamesh/topology"
)

// The default rule, before anything is learned.
func TestPortDefaultRule(t *testing.T) {
	for _, tc := range []struct {
		id, idType, desc string
		want             int
	}{
		{"33", "local", "", 33},
		{"swp33", "interface-name", "", 33},
		{"Ethernet33", "", "", 33},
		{"Eth1/33", "", "", 33},
		{"ethernet1/1/33", "", "", 33},
		{"ethernet1/1/33:1", "", "", 33}, // breakout subport
		{"swp7s2", "", "", 7},
		{"0c:42:a1:00:00:07", "mac", "swp7", 7}, // a MAC port ID: the description
		{"0c:42:a1:00:00:07", "mac", "uplink", 0},
		{"", "", "", 0},
		{"port0", "", "", 0}, // ports count from 1
	} {
		r := newPortReader()
		if got := r.port(r.text(tc.id, tc.idType, tc.desc)); got != tc.want {
			t.Errorf("port id %q (%s), description %q: port %d, want %d", tc.id, tc.idType, tc.desc, got, tc.want)
		}
	}
}

// Switches whose names are not front-panel numbers are learned from the
// plan: SONiC numbers lanes (Ethernet0, 4, 8 for ports 1, 2, 3), Arista
// writes port/lane (Ethernet33/1), some switches count from 0.
func TestCheckLearnsPortNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		port func(p int) string
	}{
		{"sonic lanes", func(p int) string { return fmt.Sprintf("Ethernet%d", 4*(p-1)) }},
		{"arista port/lane", func(p int) string { return fmt.Sprintf("Ethernet%d/1", p) }},
		{"from 0", func(p int) string { return fmt.Sprintf("et-0/0/%d", p-1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo := smallTree(t)
			name := func(_ topology.Switch, p int) string { return tc.port(p) }
			obs := Observe(topo, name)
			host(t, &obs, "node-02", 0).Neighbor = nbr("leaf-r0-00", tc.port(9))
			r := Check(topo, obs)
			want := []string{"node-02/mlx5_0 wrong-port leaf-r0-00:9"}
			if got := findingsOf(r); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("findings %q, want %q", got, want)
			}
			learned := 0
			for _, pr := range r.PortRules {
				if pr.Learned {
					learned++
				}
			}
			if learned == 0 {
				t.Errorf("no rule learned: %+v", r.PortRules)
			}
		})
	}
}

// A handful of miscabled ports must not teach a rule: with one port of
// a shape, the default stands even though a stranger rule fits it.
func TestLearningNeedsEvidence(t *testing.T) {
	r := newPortReader()
	p := r.text("swp5", "", "")
	r.sample(p, []int{3}) // 5/2+1 = 3 would fit
	r.learn()
	if got := r.port(p); got != 5 {
		t.Fatalf("one sample taught a rule: swp5 reads %d", got)
	}
}

func TestSwitchNames(t *testing.T) {
	s := newSwitchNames([]string{"leaf-r0-00", "leaf-r0-01", "spine.a", "spine.b", "ib-sw"}, []string{"", "", "", "", "0x0c42a10300aa0001"})
	for _, tc := range []struct {
		system, chassis string
		want            int32
	}{
		{"leaf-r0-00", "", 0},
		{"LEAF-R0-01.dc1.example.com", "", 1},
		{"spine.a", "", 2},
		{"spine", "", -1}, // two plan switches share the short name
		{"MF0;ib-sw:MQM9700/U1", "0c:42:a1:03:00:aa:00:01", 4},
		{"mgmt-sw-7", "", -1},
	} {
		if got := s.find(tc.system, tc.chassis); got != tc.want {
			t.Errorf("%q / %q: switch %d, want %d", tc.system, tc.chassis, got, tc.want)
		}
	}
}
