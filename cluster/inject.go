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
	if err := sim.CheckFaults(add, c.names); err != nil {
		return fmt.Errorf("inject: %w", err)
	}
	if err := c.fab.SetFaults(append(slices.Clone(c.base), add...)); err != nil {
		return err
	}
	c.log.Info("faults injected", "faults", specs)
	return nil
}
