package lldp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// SwitchTable is one switch's LLDP neighbour table, as its lldpd (SONiC,
// Cumulus, any Linux switch) prints it: the cables between switches,
// which no host hears, are seen only here.
type SwitchTable struct {
	// Local is the switch's own system name when the output carries it
	// (`lldpcli show chassis` before `show neighbors` in one file); ""
	// when it does not, and the caller must name the switch.
	Local string
	// Neighbors has one entry per neighbour, Interface being the
	// switch's own port.
	Neighbors []Neighbor
}

// ParseSwitchTable reads `lldpcli show neighbors` as -f json, -f json0
// or -f keyvalue writes it. A file may hold `lldpcli show chassis` too
// (one JSON document after the other, or keyvalue lines), which names
// the switch; an empty table is not an error: a switch that hears no
// one has no cables.
func ParseSwitchTable(data []byte) (SwitchTable, error) {
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) == 0:
		return SwitchTable{}, errors.New("empty: save `lldpcli show neighbors -f json` on the switch")
	case trimmed[0] == '{':
		return parseJSONTables(trimmed)
	case bytes.HasPrefix(trimmed, []byte("lldp.")) || bytes.HasPrefix(trimmed, []byte("local-chassis.")):
		return parseKeyValue(trimmed)
	}
	return SwitchTable{}, errors.New("not lldpcli's output (neither JSON nor keyvalue): save `lldpcli show neighbors -f json` on the switch")
}

// parseJSONTables reads every JSON document of data: lldpcli writes one
// per command, and operators concatenate `show chassis` and
// `show neighbors`.
func parseJSONTables(data []byte) (SwitchTable, error) {
	var t SwitchTable
	dec := json.NewDecoder(bytes.NewReader(data))
	for doc := 1; ; doc++ {
		var top map[string]json.RawMessage
		if err := dec.Decode(&top); err == io.EOF {
			return t, nil
		} else if err != nil {
			return t, fmt.Errorf("JSON document %d: %w", doc, err)
		}
		if raw, ok := top["local-chassis"]; ok {
			name, err := localName(raw)
			if err != nil {
				return t, fmt.Errorf("JSON document %d: local-chassis: %w", doc, err)
			}
			t.Local = name
		}
		raw, ok := top["lldp"]
		if !ok {
			continue
		}
		ns, err := jsonNeighbors(raw)
		if err != nil {
			return t, fmt.Errorf("JSON document %d: %w", doc, err)
		}
		t.Neighbors = append(t.Neighbors, ns...)
	}
}

// jsonNeighbors reads the "lldp" member of -f json (an object) or of
// -f json0 (a list, ParseLLDPCLI's shape).
func jsonNeighbors(raw json.RawMessage) ([]Neighbor, error) {
	if r := bytes.TrimSpace(raw); len(r) > 0 && r[0] == '[' {
		byIf, err := ParseLLDPCLI([]byte(`{"lldp":`+string(r)+`}`), time.Time{})
		if err != nil {
			return nil, err
		}
		names := make([]string, 0, len(byIf))
		for name := range byIf {
			names = append(names, name)
		}
		sort.Strings(names) // the map lost the file's order; keep reports stable
		var out []Neighbor
		for _, name := range names {
			out = append(out, byIf[name]...)
		}
		return out, nil
	}
	var l struct {
		Interface json.RawMessage `json:"interface"`
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("lldp: %w", err)
	}
	ifs, err := keyedList(l.Interface)
	if err != nil {
		return nil, fmt.Errorf("lldp.interface: %w", err)
	}
	out := make([]Neighbor, 0, len(ifs))
	for _, ifc := range ifs {
		n, err := jsonNeighbor(ifc.key, ifc.val)
		if err != nil {
			return nil, fmt.Errorf("lldp.interface %q: %w", ifc.key, err)
		}
		out = append(out, n)
	}
	return out, nil
}

// keyed is one {"name": {...}} member, kept in the file's order.
type keyed struct {
	key string
	val json.RawMessage
}

// keyedList reads lldpcli -f json's collections: one entry is an object
// {"swp1": {...}}, several a list of such objects (the shape changes
// with the count, which is why the hosts' reader wants json0).
func keyedList(raw json.RawMessage) ([]keyed, error) {
	r := bytes.TrimSpace(raw)
	if len(r) == 0 || string(r) == "null" {
		return nil, nil
	}
	var objs []map[string]json.RawMessage
	if r[0] == '[' {
		if err := json.Unmarshal(r, &objs); err != nil {
			return nil, err
		}
	} else {
		var one map[string]json.RawMessage
		if err := json.Unmarshal(r, &one); err != nil {
			return nil, err
		}
		objs = []map[string]json.RawMessage{one}
	}
	var out []keyed
	for _, o := range objs {
		for k, v := range o { // one key per object as lldpcli writes them
			out = append(out, keyed{k, v})
		}
	}
	return out, nil
}

// jsonChassis is a chassis as -f json writes it, under its name or, when
// the neighbour sends none, directly.
type jsonChassis struct {
	ID    *jsonTyped      `json:"id"`
	Descr string          `json:"descr"`
	Mgmt  json.RawMessage `json:"mgmt-ip"` // a string, or a list of them
}

type jsonTyped struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

func jsonNeighbor(ifname string, raw json.RawMessage) (Neighbor, error) {
	var ifc struct {
		Chassis map[string]json.RawMessage `json:"chassis"`
		Port    struct {
			ID    *jsonTyped `json:"id"`
			Descr string     `json:"descr"`
		} `json:"port"`
	}
	if err := json.Unmarshal(raw, &ifc); err != nil {
		return Neighbor{}, err
	}
	name, c, err := chassis(ifc.Chassis)
	if err != nil {
		return Neighbor{}, err
	}
	if ifc.Port.ID == nil || ifc.Port.ID.Value == "" {
		return Neighbor{}, errors.New("port has no id")
	}
	n := Neighbor{Interface: text([]byte(ifname)), SystemName: text([]byte(name)), SystemDescription: text([]byte(c.Descr)),
		PortID: text([]byte(ifc.Port.ID.Value)), PortIDType: lldpdType(ifc.Port.ID.Type),
		PortDescription: text([]byte(ifc.Port.Descr)), Source: SourceLLDPD}
	if c.ID != nil {
		n.ChassisID, n.ChassisIDType = text([]byte(c.ID.Value)), lldpdType(c.ID.Type)
	}
	return n, nil
}

// chassis tells a named chassis ({"spine-01": {"id": ...}}) from an
// unnamed one ({"id": ..., "descr": ...}).
func chassis(m map[string]json.RawMessage) (name string, c jsonChassis, err error) {
	if len(m) == 0 {
		return "", c, errors.New("no chassis")
	}
	if _, unnamed := m["id"]; !unnamed && len(m) == 1 {
		for k, v := range m {
			name = k
			err = json.Unmarshal(v, &c)
		}
		return name, c, err
	}
	raw, _ := json.Marshal(m) // re-encoding what was just decoded cannot fail
	return "", c, json.Unmarshal(raw, &c)
}

// localName is the system name in `lldpcli show chassis` (-f json:
// {"chassis": {"leaf05": {...}}}; json0: {"chassis": [{"name": [...]}]}).
func localName(raw json.RawMessage) (string, error) {
	if r := bytes.TrimSpace(raw); len(r) > 0 && r[0] == '[' {
		var l []struct {
			Chassis []struct {
				Name []json0Value `json:"name"`
			} `json:"chassis"`
		}
		if err := json.Unmarshal(r, &l); err != nil {
			return "", err
		}
		if len(l) == 1 && len(l[0].Chassis) == 1 {
			if name := first(l[0].Chassis[0].Name); name != "" {
				return name, nil
			}
		}
		return "", errors.New("no system name")
	}
	var l struct {
		Chassis map[string]json.RawMessage `json:"chassis"`
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		return "", err
	}
	name, _, err := chassis(l.Chassis)
	if err == nil && name == "" {
		err = errors.New("no system name")
	}
	return text([]byte(name)), err
}

// parseKeyValue reads -f keyvalue: lldp.IFACE.chassis.name=spine-01,
// lldp.IFACE.chassis.mac=..., lldp.IFACE.port.ifname=swp9 (an ID is
// keyed by its type), lldp.IFACE.port.descr=...; and
// local-chassis.chassis.name=leaf05 from `show chassis`.
func parseKeyValue(data []byte) (SwitchTable, error) {
	var t SwitchTable
	byIf := map[string]*Neighbor{}
	var order []string
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			return t, fmt.Errorf("line %d: no '=' in %q", i+1, line)
		}
		if key == "local-chassis.chassis.name" {
			t.Local = text([]byte(val))
			continue
		}
		rest, ok := strings.CutPrefix(key, "lldp.")
		if !ok {
			continue
		}
		ifname, field, what := kvField(rest)
		if ifname == "" {
			continue // via, rid, age, vlan, ...: nothing cabling reads
		}
		n := byIf[ifname]
		if n == nil {
			n = &Neighbor{Interface: text([]byte(ifname)), Source: SourceLLDPD}
			byIf[ifname] = n
			order = append(order, ifname)
		}
		v := text([]byte(val))
		switch {
		case what == "chassis" && field == "name":
			n.SystemName = v
		case what == "chassis" && field == "descr":
			n.SystemDescription = v
		case what == "chassis" && lldpdTypes[field] != "":
			n.ChassisID, n.ChassisIDType = v, lldpdTypes[field]
		case what == "port" && field == "descr":
			n.PortDescription = v
		case what == "port" && lldpdTypes[field] != "":
			n.PortID, n.PortIDType = v, lldpdTypes[field]
		}
	}
	for _, ifname := range order {
		n := byIf[ifname]
		if n.PortID == "" {
			return t, fmt.Errorf("lldp.%s: no port id (lldp.%s.port.ifname= or .mac=, ...)", ifname, ifname)
		}
		t.Neighbors = append(t.Neighbors, *n)
	}
	return t, nil
}

// kvField splits "swp1.chassis.name" into swp1, name, chassis; the
// interface may itself hold dots (a VLAN subinterface), so it is what
// precedes the last ".chassis." or ".port.".
func kvField(rest string) (ifname, field, what string) {
	for _, w := range []string{"chassis", "port"} {
		if i := strings.LastIndex(rest, "."+w+"."); i > 0 {
			return rest[:i], rest[i+len(w)+2:], w
		}
	}
	return "", "", ""
}
