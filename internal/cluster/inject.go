package cluster

import (
	"fmt"
	"slices"

	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
)

// Inject breaks the simulated fabric while the cluster runs: the faults it
// started with plus specs (sim.ParseFault syntax) apply from now on, to
// tests and live probes alike. An empty specs heals back to the starting
// faults. A fault naming no node of the cluster is refused, as at Start.
func (c *Cluster) Inject(specs []string) error {
	add, err := sim.ParseFaults(specs)
	if err != nil {
		return err
	}
	for _, f := range add {
		if !slices.ContainsFunc(c.names, func(n string) bool { return f.Matches(n, f.Device) }) {
			return fmt.Errorf("inject %q: names no node of this cluster (%s … %s)", f.Spec, c.names[0], c.names[len(c.names)-1])
		}
	}
	if err := c.fab.SetFaults(append(slices.Clone(c.base), add...)); err != nil {
		return err
	}
	c.log.Info("faults injected", "faults", specs)
	return nil
}
