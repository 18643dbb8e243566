package lldp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// json0 is the shape of `lldpcli -f json0 show neighbors` as lldpd 1.0.16
// (Debian 12) writes it: every value is a list, typed IDs carry their
// subtype's name, numbers are strings.
type json0 struct {
	LLDP []struct {
		Interface []json0Interface `json:"interface"`
	} `json:"lldp"`
}

type json0Interface struct {
	Name    string `json:"name"`
	Via     string `json:"via"` // LLDP, or CDPv2, EDP, ... when lldpd speaks them
	Chassis []struct {
		ID     []json0Typed `json:"id"`
		Name   []json0Value `json:"name"`
		Descr  []json0Value `json:"descr"`
		MgmtIP []json0Value `json:"mgmt-ip"`
	} `json:"chassis"`
	Port []struct {
		ID    []json0Typed `json:"id"`
		Descr []json0Value `json:"descr"`
		TTL   []json0Value `json:"ttl"`
	} `json:"port"`
}

type json0Typed struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

type json0Value struct {
	Value string `json:"value"`
}

// lldpdTypes maps lldpd's names of ID subtypes onto this package's.
var lldpdTypes = map[string]string{"mac": TypeMAC, "ip": TypeNetworkAddress, "ifname": TypeInterfaceName,
	"ifalias": TypeInterfaceAlias, "local": TypeLocal}

// ParseLLDPCLI reads `lldpcli -f json0 show neighbors`, stamping every
// neighbour as seen at seen. An interface may list several neighbours.
func ParseLLDPCLI(data []byte, seen time.Time) (map[string][]Neighbor, error) {
	var doc json0
	if err := json.Unmarshal(data, &doc); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("not lldpcli's json0 output (%v): run lldpcli -f json0 show neighbors; -f json changes its shape with the number of neighbours", err)
		}
		return nil, fmt.Errorf("lldpcli output: %w", err)
	}
	out := map[string][]Neighbor{}
	for _, l := range doc.LLDP {
		for i, ifc := range l.Interface {
			n, err := ifc.neighbor(seen)
			if err != nil {
				return nil, fmt.Errorf("lldpcli output: interface %d (%q): %w", i, ifc.Name, err)
			}
			out[ifc.Name] = append(out[ifc.Name], n)
		}
	}
	return out, nil
}

func (ifc json0Interface) neighbor(seen time.Time) (Neighbor, error) {
	if ifc.Name == "" {
		return Neighbor{}, errors.New("no name")
	}
	if len(ifc.Chassis) != 1 || len(ifc.Port) != 1 {
		return Neighbor{}, fmt.Errorf("%d chassis and %d port entries, want one each", len(ifc.Chassis), len(ifc.Port))
	}
	c, p := ifc.Chassis[0], ifc.Port[0]
	if len(c.ID) != 1 || len(p.ID) != 1 {
		return Neighbor{}, errors.New("a chassis or port without exactly one ID")
	}
	n := Neighbor{Interface: ifc.Name, ChassisID: c.ID[0].Value, ChassisIDType: lldpdType(c.ID[0].Type),
		PortID: p.ID[0].Value, PortIDType: lldpdType(p.ID[0].Type), SystemName: first(c.Name),
		SystemDescription: first(c.Descr), PortDescription: first(p.Descr), Source: SourceLLDPD, Seen: seen}
	n.ChassisID, n.PortID = text([]byte(n.ChassisID)), text([]byte(n.PortID))
	for _, m := range c.MgmtIP {
		n.ManagementAddrs = append(n.ManagementAddrs, text([]byte(m.Value)))
	}
	if ttl := first(p.TTL); ttl != "" {
		s, err := strconv.ParseUint(ttl, 10, 16)
		if err != nil {
			return Neighbor{}, fmt.Errorf("port ttl %q: %w", ttl, err)
		}
		n.TTL = time.Duration(s) * time.Second
	}
	return n, nil
}

func lldpdType(t string) string {
	if m, ok := lldpdTypes[t]; ok {
		return m
	}
	return t // "unhandled": lldpd read a subtype it does not render
}

// first is a list's first value, made safe to print like a frame's text:
// lldpd passes the switch's bytes through.
func first(vs []json0Value) string {
	if len(vs) == 0 {
		return ""
	}
	return text([]byte(vs[0].Value))
}
