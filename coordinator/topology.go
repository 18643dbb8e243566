package coordinator

import (
	"github.com/rdmamesh/rdmamesh/coordinator/store"
	"github.com/rdmamesh/rdmamesh/topology"
)

// configuredTopology is the topology this replica was given and its
// committed form, encoded once: it is compared before every sweep.
type configuredTopology struct {
	entry   []byte
	version string
}

func newConfiguredTopology(t *topology.Topology) configuredTopology {
	if t == nil {
		return configuredTopology{}
	}
	entry, v := store.EncodeTopology(t)
	return configuredTopology{entry: entry, version: v}
}

// commitTopology makes this replica's configured topology the replicated
// one when it is not already; the leader calls it on election and before
// each sweep, so every sweep records the topology it ran on. A replica
// configured without one leaves the replicated topology as it is: a
// follower need not carry the file to judge sweeps as its leader does.
func (c *Coordinator) commitTopology() error {
	if c.topo.version == "" {
		return nil
	}
	if _, v := c.fsm.CurrentTopology(); v == c.topo.version {
		return nil
	}
	if err := c.apply(c.topo.entry); err != nil {
		return err
	}
	t := c.opts.Topology
	c.log.Info("committed the fabric topology", "version", c.topo.version, "switches", len(t.Switches), "hcas", len(t.HCAs), "cables", len(t.Cables))
	return nil
}

// Topology is the fabric's topology as last committed, or the configured
// one before that (or without a store yet); nil when there is none.
func (c *Coordinator) Topology() *topology.Topology {
	if c.fsm == nil {
		return c.opts.Topology
	}
	if t, _ := c.fsm.CurrentTopology(); t != nil {
		return t
	}
	return c.opts.Topology
}

// sweepTopology is the topology sweep's analysis routes its cells over:
// the version it started on; nil when it ran without one.
func (c *Coordinator) sweepTopology(version string) *topology.Topology {
	if version == "" {
		return nil
	}
	return c.fsm.Topology(version)
}
