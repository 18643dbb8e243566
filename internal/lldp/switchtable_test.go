package lldp

import (
	"strings"
	"testing"
)

// The fixture is modelled on lldpcli -f json show neighbors on a
// Cumulus leaf: the management port's neighbour, a host (MAC port ID),
// a named spine (ifname port ID, nested auto-negotiation and vlan) and
// an unnamed SONiC spine (the chassis keyed directly, a local port ID).
func TestParseSwitchTableJSON(t *testing.T) {
	tab, err := ParseSwitchTable(readTestdata(t, "switch-leaf05-json.json"))
	if err != nil {
		t.Fatal(err)
	}
	if tab.Local != "" || len(tab.Neighbors) != 4 {
		t.Fatalf("got %+v, want 4 neighbours and no local name", tab)
	}
	got := map[string]Neighbor{}
	for _, n := range tab.Neighbors {
		got[n.Interface] = n
	}
	if n := got["swp49"]; n.SystemName != "spine-r0-00" || n.PortID != "swp9" || n.PortIDType != TypeInterfaceName ||
		n.PortDescription != "to leaf05 swp49" || n.ChassisID != "1c:34:da:aa:00:01" || n.ChassisIDType != TypeMAC ||
		n.Source != SourceLLDPD {
		t.Errorf("swp49: %+v", n)
	}
	if n := got["swp50"]; n.SystemName != "" || n.ChassisID != "1c:34:da:bb:00:01" || n.PortID != "Ethernet8" ||
		n.PortIDType != TypeLocal || n.PortDescription != "fortyGigE0/8" || !strings.HasPrefix(n.SystemDescription, "SONiC") {
		t.Errorf("swp50 (unnamed chassis): %+v", n)
	}
	if n := got["swp1"]; n.SystemName != "gpu-node-017" || n.PortIDType != TypeMAC || n.PortDescription != "enp12s0np0" {
		t.Errorf("swp1: %+v", n)
	}
}

// `lldpcli -f json show chassis` before the neighbours names the switch;
// one interface is an object, not a list.
func TestParseSwitchTableLocalChassis(t *testing.T) {
	in := `{"local-chassis": {"chassis": {"leaf05": {"id": {"type": "mac", "value": "1c:34:da:05:00:01"}, "descr": "Cumulus"}}}}
{"lldp": {"interface": {"swp49": {"via": "LLDP", "chassis": {"spine-r0-00": {"id": {"type": "mac", "value": "x"}}},
  "port": {"id": {"type": "ifname", "value": "swp9"}}}}}}`
	tab, err := ParseSwitchTable([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if tab.Local != "leaf05" || len(tab.Neighbors) != 1 || tab.Neighbors[0].Interface != "swp49" || tab.Neighbors[0].PortID != "swp9" {
		t.Errorf("got %+v", tab)
	}
	tab, err = ParseSwitchTable([]byte(`{"lldp": {}}`))
	if err != nil || len(tab.Neighbors) != 0 {
		t.Errorf("a switch hearing no one: %+v, %v", tab, err)
	}
}

// The hosts' json0 reads as a switch's table too.
func TestParseSwitchTableJSON0(t *testing.T) {
	tab, err := ParseSwitchTable(readTestdata(t, "lldpcli-json0-two.json"))
	if err != nil || len(tab.Neighbors) != 2 || tab.Neighbors[0].SystemName != "leaf-1" {
		t.Errorf("got %+v, %v", tab, err)
	}
}

func TestParseSwitchTableKeyValue(t *testing.T) {
	in := `local-chassis.chassis.mac=1c:34:da:05:00:01
local-chassis.chassis.name=leaf05
lldp.swp49.via=LLDP
lldp.swp49.age=41 days, 02:10:58
lldp.swp49.chassis.mac=1c:34:da:aa:00:01
lldp.swp49.chassis.name=spine-r0-00
lldp.swp49.chassis.Bridge.enabled=on
lldp.swp49.port.ifname=swp9
lldp.swp49.port.descr=to leaf05 swp49
lldp.swp50.100.chassis.name=spine-r0-01
lldp.swp50.100.port.local=Ethernet8
`
	tab, err := ParseSwitchTable([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if tab.Local != "leaf05" || len(tab.Neighbors) != 2 {
		t.Fatalf("got %+v", tab)
	}
	if n := tab.Neighbors[0]; n.Interface != "swp49" || n.SystemName != "spine-r0-00" || n.PortID != "swp9" ||
		n.PortIDType != TypeInterfaceName || n.PortDescription != "to leaf05 swp49" || n.ChassisIDType != TypeMAC {
		t.Errorf("swp49: %+v", n)
	}
	if n := tab.Neighbors[1]; n.Interface != "swp50.100" || n.PortID != "Ethernet8" || n.PortIDType != TypeLocal {
		t.Errorf("a dotted interface: %+v", n)
	}
}

func TestParseSwitchTableErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":                           "empty",
		"Interface: swp1, via: LLDP": "neither JSON nor keyvalue",
		`{"lldp": {"interface": 3}}`: "lldp.interface",
		`{"lldp": {"interface": {"swp1": {"chassis": {"s": {}}, "port": {}}}}}`: `"swp1": port has no id`,
		`{"lldp": {"interface": {"swp1": {"port": {"id": {"value": "x"}}}}}}`:   "no chassis",
		`{"local-chassis": {"chassis": {"id": {"value": "x"}}}}`:                "no system name",
		"lldp.swp1.chassis.name=s":                                              "no port id",
		"lldp.swp1.port.ifname":                                                 "no '='",
	} {
		_, err := ParseSwitchTable([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error saying %s", in, err, want)
		}
	}
}
