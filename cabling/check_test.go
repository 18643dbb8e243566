package cabling

import (
	"slices"
	"strings"
	"testing"
)

func nbr(sys, port string) *Neighbor {
	return &Neighbor{SystemName: sys, PortID: port, PortIDType: "interface-name"}
}

func swLine(sw, port, nsw, nport string) SwitchPort {
	return SwitchPort{Switch: sw, Port: port, Neighbor: *nbr(nsw, nport)}
}

// Each case changes a correctly cabled small tree's observations and
// wants exactly these findings (END verdict FOUND [with OTHER]).
func TestCheckVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, o *Observed)
		want   []string
	}{
		{"clean", func(*testing.T, *Observed) {}, nil},
		{"swapped HCAs", func(t *testing.T, o *Observed) {
			t.Helper()
			host(t, o, "node-01", 0).Neighbor = nbr("leaf-r1-00", "swp1")
			host(t, o, "node-01", 1).Neighbor = nbr("leaf-r0-00", "swp1")
		}, []string{"node-01/mlx5_0 swapped leaf-r1-00:1 with node-01/mlx5_1", "node-01/mlx5_1 swapped leaf-r0-00:1 with node-01/mlx5_0"}},
		{"wrong rail", func(t *testing.T, o *Observed) {
			t.Helper()
			host(t, o, "node-02", 0).Neighbor = nbr("leaf-r1-01", "swp9")
		}, []string{"node-02/mlx5_0 wrong-rail leaf-r1-01:9"}},
		{"wrong leaf", func(t *testing.T, o *Observed) {
			t.Helper()
			host(t, o, "node-02", 0).Neighbor = nbr("leaf-r0-01", "swp9")
		}, []string{"node-02/mlx5_0 wrong-leaf leaf-r0-01:9"}},
		{"wrong port", func(t *testing.T, o *Observed) {
			t.Helper()
			host(t, o, "node-02", 0).Neighbor = nbr("leaf-r0-00", "swp9")
		}, []string{"node-02/mlx5_0 wrong-port leaf-r0-00:9"}},
		{"HCA port down", func(t *testing.T, o *Observed) {
			t.Helper()
			h := host(t, o, "node-03", 1)
			h.Neighbor, h.Down = nil, true
		}, []string{"node-03/mlx5_1 missing "}},
		{"HCA not reported by its node", func(t *testing.T, o *Observed) {
			t.Helper()
			i := slices.IndexFunc(o.Hosts, func(h HostPort) bool { return h.Node == "node-03" && h.Rail == 1 })
			o.Hosts = slices.Delete(o.Hosts, i, i+1)
		}, []string{"node-03/mlx5_1 missing "}},
		{"nothing heard", func(t *testing.T, o *Observed) {
			t.Helper()
			h := host(t, o, "node-04", 0)
			h.Neighbor, h.Why = nil, "no LLDP frame in 60 s"
		}, []string{"node-04/mlx5_0 no-evidence "}},
		{"node not reported", func(t *testing.T, o *Observed) {
			t.Helper()
			o.Hosts = slices.DeleteFunc(o.Hosts, func(h HostPort) bool { return h.Node == "node-04" })
		}, []string{"node-04/mlx5_0 no-evidence ", "node-04/mlx5_1 no-evidence "}},
		{"neighbour outside the plan", func(t *testing.T, o *Observed) {
			t.Helper()
			host(t, o, "node-05", 1).Neighbor = &Neighbor{SystemName: "mgmt-sw-7", PortID: "ge-0/0/3", PortDescription: "oob"}
		}, []string{`node-05/mlx5_1 unknown-switch system "mgmt-sw-7", port id "ge-0/0/3", port description "oob"`}},
		{"HCA not in the plan", func(t *testing.T, o *Observed) {
			t.Helper()
			o.Hosts = append(o.Hosts, HostPort{Node: "node-99", Device: "mlx5_0", Neighbor: nbr("leaf-r0-00", "swp12")},
				HostPort{Node: "node-98", Device: "mlx5_0", Down: true})
		}, []string{"node-99/mlx5_0 unexpected leaf-r0-00:12"}},
		{"uplink on a spare spine port", func(t *testing.T, o *Observed) {
			t.Helper()
			o.Switches[switchLine(t, o, "leaf-r0-00", "swp5")].Neighbor = *nbr("spine-r0-00", "swp9")
			o.Switches[switchLine(t, o, "spine-r0-00", "swp1")] = swLine("spine-r0-00", "swp9", "leaf-r0-00", "swp5")
		}, []string{"leaf-r0-00:5 wrong-port spine-r0-00:9"}},
		{"uplink to the other spine", func(t *testing.T, o *Observed) {
			t.Helper()
			o.Switches[switchLine(t, o, "leaf-r0-01", "swp6")].Neighbor = *nbr("spine-r0-01", "swp9")
			o.Switches[switchLine(t, o, "spine-r0-00", "swp4")] = swLine("spine-r0-01", "swp9", "leaf-r0-01", "swp6")
		}, []string{"leaf-r0-01:6 wrong-switch spine-r0-01:9"}},
		{"uplink to the other rail's spine", func(t *testing.T, o *Observed) {
			t.Helper()
			o.Switches[switchLine(t, o, "leaf-r0-01", "swp6")].Neighbor = *nbr("spine-r1-01", "swp9")
			o.Switches[switchLine(t, o, "spine-r0-00", "swp4")] = swLine("spine-r1-01", "swp9", "leaf-r0-01", "swp6")
		}, []string{"leaf-r0-01:6 wrong-rail spine-r1-01:9"}},
		{"uplink pulled", func(t *testing.T, o *Observed) {
			t.Helper()
			o.Switches = slices.Delete(o.Switches, switchLine(t, o, "leaf-r1-00", "swp8"), switchLine(t, o, "leaf-r1-00", "swp8")+1)
			o.Switches = slices.Delete(o.Switches, switchLine(t, o, "spine-r1-01", "swp2"), switchLine(t, o, "spine-r1-01", "swp2")+1)
		}, []string{"leaf-r1-00:8 missing "}},
		{"uplinks crossed on their leaf", func(t *testing.T, o *Observed) {
			t.Helper()
			o.Switches[switchLine(t, o, "leaf-r0-00", "swp5")].Neighbor = *nbr("spine-r0-01", "swp1")
			o.Switches[switchLine(t, o, "leaf-r0-00", "swp7")].Neighbor = *nbr("spine-r0-00", "swp1")
			o.Switches[switchLine(t, o, "spine-r0-00", "swp1")].Neighbor = *nbr("leaf-r0-00", "swp7")
			o.Switches[switchLine(t, o, "spine-r0-01", "swp1")].Neighbor = *nbr("leaf-r0-00", "swp5")
		}, []string{"leaf-r0-00:5 swapped spine-r0-01:1 with leaf-r0-00:7", "leaf-r0-00:7 swapped spine-r0-00:1 with leaf-r0-00:5"}},
		{"cable between spines, seen from both", func(t *testing.T, o *Observed) {
			t.Helper()
			o.Switches = append(o.Switches, swLine("spine-r0-00", "swp20", "spine-r0-01", "swp20"), swLine("spine-r0-01", "swp20", "spine-r0-00", "swp20"))
		}, []string{"spine-r0-00:20 unexpected spine-r0-01:20"}},
		{"switch table names an unknown switch", func(t *testing.T, o *Observed) {
			t.Helper()
			o.Switches = append(o.Switches, swLine("spine-r0-00", "swp20", "border-1", "Ethernet1"))
		}, []string{`spine-r0-00:20 unknown-switch system "border-1", port id "Ethernet1"`}},
		{"a host heard by its leaf is the host's to report", func(t *testing.T, o *Observed) {
			t.Helper()
			o.Switches = append(o.Switches, SwitchPort{Switch: "leaf-r0-00", Port: "swp1", Neighbor: Neighbor{SystemName: "node-01", PortID: "0c:42:a1:00:00:01", PortIDType: "mac"}})
		}, nil},
		{"traced paths alone", func(t *testing.T, o *Observed) {
			t.Helper()
			host(t, o, "node-01", 0).Neighbor = nil
			o.Paths = []Path{{SrcNode: "node-01", SrcRail: 0, DstNode: "node-05", DstRail: 0, Hops: []string{"leaf-r0-00", "spine-r0-00", "leaf-r0-01"}}}
		}, nil},
		{"a path through a spine where the plan has one leaf", func(t *testing.T, o *Observed) {
			t.Helper()
			host(t, o, "node-03", 0).Neighbor = nil
			o.Paths = []Path{{SrcNode: "node-02", SrcRail: 0, DstNode: "node-03", DstRail: 0, Hops: []string{"leaf-r0-00", "spine-r0-01", "leaf-r0-01"}}}
		}, []string{"node-03/mlx5_0 wrong-leaf leaf-r0-01:?"}},
		{"paths that disagree are no evidence", func(t *testing.T, o *Observed) {
			t.Helper()
			host(t, o, "node-03", 0).Neighbor = nil
			o.Paths = []Path{{SrcNode: "node-02", SrcRail: 0, DstNode: "node-03", DstRail: 0, Hops: []string{"leaf-r0-00", "spine-r0-01", "leaf-r0-01"}},
				{SrcNode: "node-01", SrcRail: 0, DstNode: "node-03", DstRail: 0, Hops: []string{"leaf-r0-00"}}}
		}, []string{"node-03/mlx5_0 no-evidence "}},
		{"a silent last hop says nothing", func(t *testing.T, o *Observed) {
			t.Helper()
			host(t, o, "node-03", 0).Neighbor = nil
			o.Paths = []Path{{SrcNode: "node-02", SrcRail: 0, DstNode: "node-03", DstRail: 0, Hops: []string{"leaf-r0-00", "spine-r0-01", ""}}}
		}, []string{"node-03/mlx5_0 no-evidence "}},
		{"paths swap too", func(t *testing.T, o *Observed) {
			t.Helper()
			host(t, o, "node-06", 0).Neighbor, host(t, o, "node-06", 1).Neighbor = nil, nil
			o.Paths = []Path{{SrcNode: "node-06", SrcRail: 0, DstNode: "node-01", DstRail: 1, Hops: []string{"leaf-r1-01", "spine-r1-00", "leaf-r1-00"}},
				{SrcNode: "node-06", SrcRail: 1, DstNode: "node-01", DstRail: 0, Hops: []string{"leaf-r0-01", "spine-r0-00", "leaf-r0-00"}}}
		}, []string{"node-06/mlx5_0 swapped leaf-r1-01:? with node-06/mlx5_1", "node-06/mlx5_1 swapped leaf-r0-01:? with node-06/mlx5_0"}},
		{"names as switches write them", func(t *testing.T, o *Observed) {
			t.Helper()
			host(t, o, "node-01", 0).Neighbor = &Neighbor{SystemName: "LEAF-R0-00.dc1.example.com", PortID: "0c:42:a1:00:00:01", PortIDType: "mac", PortDescription: "swp1"}
			host(t, o, "node-02", 0).Neighbor = nbr("leaf-r0-00", "2")
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo := smallTree(t)
			obs := Observe(topo, swp)
			tc.change(t, &obs)
			r := Check(topo, obs)
			if got := findingsOf(r); !slices.Equal(got, tc.want) {
				t.Errorf("findings\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
			if n := len(r.Ports) - len(r.Findings()); n != r.Counts[OK] {
				t.Errorf("%d ok ports, counted %d", n, r.Counts[OK])
			}
		})
	}
}
