package cluster

import (
	"fmt"

	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
	"github.com/rdmamesh/rdmamesh/topology"
)

// cabledFabric is the simulated fabric as cabled: what its tests, traces and
// LLDP take, while the coordinators judge against the plan.
type cabledFabric struct {
	topo      *topology.Topology
	unplugged []int // HCAs whose cable is missing (their port is down)
}

// asCabled applies o.Miscabled to o.Topology and returns, with the
// fabric as cabled, a down fault on each unplugged HCA's simulated port
// (named by the preset's device for its rail, which a plan may not give).
func asCabled(o Options) (cabledFabric, []sim.Fault, error) {
	if len(o.Miscabled) == 0 {
		return cabledFabric{topo: o.Topology}, nil, nil
	}
	if o.Topology == nil {
		return cabledFabric{}, nil, fmt.Errorf("miscabled %v: a fabric without a topology has no cables to miscable (give a fat tree or a plan)", o.Miscabled)
	}
	t, unplugged, err := topology.Miscable(o.Topology, o.Miscabled)
	if err != nil {
		return cabledFabric{}, nil, err
	}
	spec, err := presetOf(o)
	if err != nil {
		return cabledFabric{}, nil, err
	}
	var faults []sim.Fault
	for _, h := range unplugged {
		x := t.HCAs[h]
		f, err := sim.ParseFault(x.Node + "/" + spec.Device(x.Rail) + ":down")
		if err != nil {
			return cabledFabric{}, nil, fmt.Errorf("miscabled: unplugging %s: %w", t.HCAName(h), err)
		}
		faults = append(faults, f)
	}
	return cabledFabric{topo: t, unplugged: unplugged}, faults, nil
}

func presetOf(o Options) (sim.PresetSpec, error) {
	if o.Preset == "" {
		return sim.Preset(sim.DefaultPreset)
	}
	return sim.Preset(o.Preset)
}
