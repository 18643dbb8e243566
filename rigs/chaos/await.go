package chaos

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

// leaderOf returns the leader every coordinator in among agrees on, once
// that leader's own status says Leader and lists all three voters.
func (c *Cluster) leaderOf(ctx context.Context, among []*coord) (*coord, string) {
	agreed := ""
	for _, co := range among {
		st, err := c.api.status(ctx, co.api)
		if err != nil {
			return nil, fmt.Sprintf("%s: %v", co.name, err)
		}
		if st.Leader == "" {
			return nil, co.name + " knows no leader"
		}
		if agreed != "" && st.Leader != agreed {
			return nil, fmt.Sprintf("%s follows %s, others %s", co.name, st.Leader, agreed)
		}
		agreed = st.Leader
	}
	l := c.coord(agreed)
	if l == nil || !slices.Contains(among, l) {
		return nil, "leader " + agreed + " is not among the live coordinators"
	}
	st, err := c.api.status(ctx, l.api)
	if err != nil || st.State != "Leader" || len(st.Voters) != len(c.coords) {
		return nil, fmt.Sprintf("%s: state %q, voters %v, err %v", l.name, st.State, st.Voters, err)
	}
	return l, ""
}

// waitLeader waits until the live coordinators agree on a leader.
func (c *Cluster) waitLeader(ctx context.Context, timeout time.Duration) (*coord, error) {
	var l *coord
	err := waitFor(ctx, timeout, "the coordinators to agree on a leader", func() (bool, string) {
		var why string
		l, why = c.leaderOf(ctx, c.live())
		return l != nil, why
	})
	if err != nil {
		_, _, serr := c.net.Stats()
		if serr != nil {
			err = fmt.Errorf("%w; the raft proxy could not read a header: %v", err, serr)
		}
	}
	return l, err
}

// waitWorkers waits until every live coordinator sees each of names alive
// in gossip with its inventory fetched: a sweep plans from the inventory,
// and a new leader must already have it.
func (c *Cluster) waitWorkers(ctx context.Context, timeout time.Duration, names []string) error {
	return waitFor(ctx, timeout, fmt.Sprintf("%d workers on every coordinator", len(names)), func() (bool, string) {
		for _, co := range c.live() {
			nodes, err := c.api.nodes(ctx, co.api)
			if err != nil {
				return false, fmt.Sprintf("%s: %v", co.name, err)
			}
			for _, name := range names {
				i := slices.IndexFunc(nodes, func(n api.NodeInfo) bool { return n.Name == name })
				if i < 0 || nodes[i].State != "alive" || nodes[i].Inventory == nil {
					return false, fmt.Sprintf("%s does not see %s ready", co.name, name)
				}
			}
		}
		return true, ""
	})
}

// waitReady is a leader plus every live worker on every live coordinator.
func (c *Cluster) waitReady(ctx context.Context, timeout time.Duration) (*coord, error) {
	start := time.Now()
	l, err := c.waitLeader(ctx, timeout)
	if err != nil {
		return nil, err
	}
	if err := c.waitWorkers(ctx, timeout-time.Since(start), c.liveWorkers()); err != nil {
		return nil, err
	}
	return l, nil
}

// waitSweep waits until sweep id is no longer running on co.
func (c *Cluster) waitSweep(ctx context.Context, co *coord, id string, timeout time.Duration) (api.SweepInfo, error) {
	var info api.SweepInfo
	err := waitFor(ctx, timeout, "sweep "+id+" to finish on "+co.name, func() (bool, string) {
		s, err := c.api.sweep(ctx, co.api, id)
		if err != nil {
			return false, err.Error()
		}
		info = s
		return s.State != api.SweepRunning, fmt.Sprintf("%d/%d rounds", s.RoundsDone, s.Rounds)
	})
	return info, err
}
