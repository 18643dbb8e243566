package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/inventory"
	"github.com/rdmamesh/rdmamesh/internal/lldp"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/topology"
)

// ibNeighbors reads ibnetdiscover's output (file) and finds each
// InfiniBand port's neighbour in it by the device's node GUID: the
// subnet's own view, where LLDP has nothing to say.
func ibNeighbors(file string) (inventory.IBNeighborLookup, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--ibnetdiscover: %w", err)
	}
	t, err := topology.ParseIBNetDiscover(file, data)
	if err != nil {
		return nil, fmt.Errorf("--ibnetdiscover: %w", err)
	}
	byGUID := map[uint64]int{}
	for i, h := range t.HCAs {
		if g, err := strconv.ParseUint(strings.TrimPrefix(h.GUID, "0x"), 16, 64); err == nil {
			byGUID[g] = i
		}
	}
	return func(nodeGUID string, port int) probe.Neighbor {
		unknown := func(format string, a ...any) probe.Neighbor {
			return probe.Neighbor{Source: inventory.IBNeighborSource, Unknown: fmt.Sprintf(format, a...)}
		}
		g, err := strconv.ParseUint(strings.ReplaceAll(nodeGUID, ":", ""), 16, 64)
		if err != nil {
			return unknown("the device's node GUID %q (sysfs node_guid) is not readable, so it cannot be found in %s", nodeGUID, file)
		}
		h, ok := byGUID[g]
		if !ok {
			return unknown("node GUID %016x is not in %s: ibnetdiscover ran on another subnet, or before this HCA was cabled; run it again", g, file)
		}
		c := t.Cables[t.HCACable(h)]
		own, sw := c.A, c.B
		if !own.IsHCA() {
			own, sw = sw, own
		}
		if own.Port != port {
			return unknown("%s cables port %d of node GUID %016x, not port %d", file, own.Port, g, port)
		}
		s := t.Switches[sw.Switch]
		return probe.Neighbor{SystemName: s.Name, PortID: strconv.Itoa(sw.Port), PortIDType: lldp.TypeLocal,
			ChassisID: s.GUID, ChassisIDType: "guid", Source: inventory.IBNeighborSource}
	}, nil
}
