package coordinator

import "github.com/rdmamesh/rdmamesh/topology"

// SweepTopology is the topology sweep id ran on (web.SweepTopologyBackend):
// the web routes a sweep's cells for the Fabric view's link list, and
// orders its heatmap by leaf, over the same version its analysis used, not
// over a newer one committed since. nil when the sweep ran without one or
// is unknown.
func (c *Coordinator) SweepTopology(id string) *topology.Topology {
	info, ok := c.fsm.Info(id)
	if !ok {
		return nil
	}
	return c.sweepTopology(info.Topology)
}
