package coordinator

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

// bootstrap forms the cluster when this node has no raft state yet. It
// returns true when it must wait for peers to show up in gossip first.
func (c *Coordinator) bootstrap(st *raftStores, trans raft.Transport) (bool, error) {
	has, err := st.hasState()
	if err != nil || has {
		return false, err
	}
	o := c.opts
	switch {
	case len(o.Peers) > 0:
		cfg := raft.Configuration{}
		self := false
		for _, p := range o.Peers {
			self = self || p.ID == o.Name
			cfg.Servers = append(cfg.Servers, raft.Server{ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.Addr)})
		}
		if !self {
			return false, fmt.Errorf("coordinator.peers does not list this coordinator (%s): add %s=<raft address>", o.Name, o.Name)
		}
		return false, c.raft.BootstrapCluster(cfg).Error()
	case o.BootstrapExpect <= 1:
		cfg := raft.Configuration{Servers: []raft.Server{{ID: raft.ServerID(o.Name), Address: trans.LocalAddr()}}}
		return false, c.raft.BootstrapCluster(cfg).Error()
	}
	return true, nil
}

// awaitBootstrap waits until BootstrapExpect coordinators are alive in
// gossip, then bootstraps with exactly the first BootstrapExpect of them by
// name. Every coordinator computes the same set, and raft accepts the same
// bootstrap configuration from all of them; a latecomer outside the set is
// added by the leader's reconcile instead.
func (c *Coordinator) awaitBootstrap(ctx context.Context) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if c.raftHasConfiguration() {
			return // someone added us, or we already bootstrapped
		}
		coords := aliveCoordinators(c.reg.list())
		if len(coords) < c.opts.BootstrapExpect {
			continue
		}
		coords = coords[:c.opts.BootstrapExpect]
		if !slices.ContainsFunc(coords, func(n api.NodeInfo) bool { return n.Name == c.opts.Name }) {
			continue
		}
		cfg := raft.Configuration{}
		for _, n := range coords {
			cfg.Servers = append(cfg.Servers, raft.Server{ID: raft.ServerID(n.Name), Address: raft.ServerAddress(n.RaftAddr)})
		}
		if err := c.raft.BootstrapCluster(cfg).Error(); err != nil {
			c.log.Warn("bootstrap", "err", err)
		} else {
			c.log.Info("bootstrapped raft", "voters", len(cfg.Servers))
		}
		return
	}
}

func (c *Coordinator) raftHasConfiguration() bool {
	f := c.raft.GetConfiguration()
	return f.Error() == nil && len(f.Configuration().Servers) > 0
}

func aliveCoordinators(nodes []api.NodeInfo) []api.NodeInfo {
	var out []api.NodeInfo
	for _, n := range nodes {
		if n.Role == "coordinator" && n.State == "alive" && n.RaftAddr != "" {
			out = append(out, n)
		}
	}
	return out // list() is sorted by name
}

// reconcileVoters, run by the leader, adds coordinators that gossip shows
// alive but raft does not know, and removes the ones that left gracefully.
// Dead ones stay voters: a crashed coordinator is expected back.
func (c *Coordinator) reconcileVoters(ctx context.Context) {
	tick := time.NewTicker(c.opts.Reconcile)
	defer tick.Stop()
	for {
		c.reconcileOnce()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (c *Coordinator) reconcileOnce() {
	f := c.raft.GetConfiguration()
	if f.Error() != nil {
		return
	}
	known := map[string]string{} // ID → raft address
	for _, s := range f.Configuration().Servers {
		known[string(s.ID)] = string(s.Address)
	}
	for _, n := range c.reg.list() {
		if n.Role != "coordinator" || n.RaftAddr == "" || n.Name == c.opts.Name {
			continue
		}
		switch {
		case n.State == "alive" && known[n.Name] != n.RaftAddr:
			// Unknown, or known at an old address (a pod restarted with a
			// new IP): AddVoter with the same ID updates the address.
			if err := c.raft.AddVoter(raft.ServerID(n.Name), raft.ServerAddress(n.RaftAddr), 0, 5*time.Second).Error(); err != nil {
				c.log.Warn("add voter", "coordinator", n.Name, "err", err)
			} else {
				c.log.Info("added voter", "coordinator", n.Name, "raft", n.RaftAddr)
			}
		case n.State == "left" && known[n.Name] != "":
			if err := c.raft.RemoveServer(raft.ServerID(n.Name), 0, 5*time.Second).Error(); err != nil {
				c.log.Warn("remove voter", "coordinator", n.Name, "err", err)
			} else {
				c.log.Info("removed voter that left", "coordinator", n.Name)
			}
		}
	}
}
